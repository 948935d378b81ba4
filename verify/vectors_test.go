package verify

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"
)

// The shared test vectors, testdata/receipts/*.json at the repository's
// root: receipts and offline bundles, valid and each kind of forgery,
// that this package and the npm package clients/js must judge alike
// (clients/js runs the same files with `node --test`). They are built
// here from fixed keys (no ledger, no clock), so regenerating them with
//
//	go test ./verify -run TestVectors -update
//
// gives the same bytes unless the formats change.
var update = flag.Bool("update", false, "rewrite ../testdata/receipts/ (the shared test vectors)")

const vectorDir = "../testdata/receipts"

// Vector is one file of testdata/receipts. The README there documents it.
type Vector struct {
	Description string `json:"description"`
	// Kind is "receipt" (Input is a receipt) or "bundle".
	Kind  string          `json:"kind"`
	Input json.RawMessage `json:"input"`
	// LogKey is the pinned note verifier key of the log.
	LogKey string `json:"log_key"`
	// WitnessKeys and WitnessQuorum are the pinned witness policy.
	WitnessKeys   []string `json:"witness_keys"`
	WitnessQuorum int      `json:"witness_quorum"`
	// Request and Response are the exact bytes to open the commitments
	// with (absent: not checked).
	Request  []byte `json:"request,omitempty"`
	Response []byte `json:"response,omitempty"`
	// Want is "valid", "not_integrated" or "invalid".
	Want string `json:"want"`
	// Cosigners are the witnesses a valid verification names.
	Cosigners []string `json:"cosigners"`
	// Policy is, for a valid receipt carrying its rules, the policy that
	// governed it (canonical JSON), as the proven config leaf states it.
	Policy json.RawMessage `json:"policy,omitempty"`
}

// CheckVector is how the Go verifier judges a vector offline: "valid",
// "not_integrated" or "invalid", and the reason.
func CheckVector(v *Vector) (string, []string, error) {
	got, res, err := checkVector(v)
	if res == nil {
		return got, nil, err
	}
	return got, res.Cosigners, err
}

func checkVector(v *Vector) (string, *Result, error) {
	lk, err := ParseVerifier(v.LogKey)
	if err != nil {
		return "", nil, err
	}
	var wp WitnessPolicy
	for _, k := range v.WitnessKeys {
		wk, err := ParseWitnessKey(k)
		if err != nil {
			return "", nil, err
		}
		wp.Keys = append(wp.Keys, wk)
	}
	wp.Quorum = v.WitnessQuorum
	var r *Receipt
	if v.Kind == "bundle" {
		r, err = ParseBundle(v.Input)
	} else {
		r, err = ParseReceipt(v.Input)
	}
	if err != nil {
		return "invalid", nil, err
	}
	res, err := VerifyReceiptWith(context.Background(), nil, lk, Options{Witnesses: wp}, r, v.Request, v.Response)
	switch {
	case errors.Is(err, ErrNotIntegrated):
		return "not_integrated", nil, err
	case err != nil:
		return "invalid", nil, err
	case r.Checkpoint == "":
		return "not_integrated", nil, nil
	}
	return "valid", res, nil
}

func TestVectors(t *testing.T) {
	if *update {
		writeVectors(t)
	}
	files, err := filepath.Glob(filepath.Join(vectorDir, "*.json"))
	if err != nil || len(files) < 10 {
		t.Fatalf("%d vectors in %s (%v): run go test ./verify -run TestVectors -update", len(files), vectorDir, err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var v Vector
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			got, res, err := checkVector(&v)
			if got != v.Want {
				t.Fatalf("%s: got %s (%v), want %s", v.Description, got, err, v.Want)
			}
			if got != "valid" {
				return
			}
			if strings.Join(res.Cosigners, ",") != strings.Join(v.Cosigners, ",") {
				t.Fatalf("cosigners %q, want %q", res.Cosigners, v.Cosigners)
			}
			var policy json.RawMessage
			if res.Rules != nil {
				policy, _ = res.Rules.Policy(res.Transaction.Policy)
			}
			var want bytes.Buffer
			if len(v.Policy) > 0 {
				json.Compact(&want, v.Policy)
			}
			if string(policy) != want.String() {
				t.Fatalf("policy %s, want %s", policy, v.Policy)
			}
		})
	}
}

// vectorKey is a fixed Ed25519 key, derived from its name.
func vectorKey(name string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("custody test vector key: " + name))
	return ed25519.NewKeyFromSeed(seed[:])
}

func noteKeyHash(name string, algKey []byte) uint32 {
	h := sha256.Sum256(append([]byte(name+"\n"), algKey...))
	return binary.BigEndian.Uint32(h[:4])
}

// logSigner is a note signer (and its verifier key) for a fixed key.
func logSigner(t *testing.T, name string) (note.Signer, string) {
	k := vectorKey(name)
	vkey, err := note.NewEd25519VerifierKey(name, k.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	skey := fmt.Sprintf("PRIVATE+KEY+%s+%08x+%s", name, noteKeyHash(name, append([]byte{1}, k.Public().(ed25519.PublicKey)...)),
		base64.StdEncoding.EncodeToString(append([]byte{1}, k.Seed()...)))
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return s, vkey
}

// witness is a fixed cosignature/v1 key.
type witness struct {
	name string
	key  ed25519.PrivateKey
}

func (w witness) vkey() string {
	alg := append([]byte{4}, w.key.Public().(ed25519.PublicKey)...)
	return fmt.Sprintf("%s+%08x+%s", w.name, noteKeyHash(w.name, alg), base64.StdEncoding.EncodeToString(alg))
}

// cosign is the C2SP tlog-cosignature line of w over the note text body
// at Unix time ts.
func (w witness) cosign(body string, ts uint64) string {
	alg := append([]byte{4}, w.key.Public().(ed25519.PublicKey)...)
	sig := ed25519.Sign(w.key, fmt.Appendf(nil, "cosignature/v1\ntime %d\n%s", ts, body))
	raw := binary.BigEndian.AppendUint32(nil, noteKeyHash(w.name, alg))
	raw = binary.BigEndian.AppendUint64(raw, ts)
	return "— " + w.name + " " + base64.StdEncoding.EncodeToString(append(raw, sig...)) + "\n"
}

// mth is the RFC 6962 Merkle tree hash of leaves.
func mth(leaves [][]byte) []byte {
	if len(leaves) == 1 {
		return rfc6962.DefaultHasher.HashLeaf(leaves[0])
	}
	k := 1
	for k*2 < len(leaves) {
		k *= 2
	}
	return rfc6962.DefaultHasher.HashChildren(mth(leaves[:k]), mth(leaves[k:]))
}

// path is the RFC 6962 inclusion proof of leaf m, from the leaf's
// sibling up.
func path(m int, leaves [][]byte) [][]byte {
	if len(leaves) == 1 {
		return nil
	}
	k := 1
	for k*2 < len(leaves) {
		k *= 2
	}
	if m < k {
		return append(path(m, leaves[:k]), mth(leaves[k:]))
	}
	return append(path(m-k, leaves[k:]), mth(leaves[:k]))
}

func writeVectors(t *testing.T) {
	const origin = "vectors.custody.example/log"
	signer, logKey := logSigner(t, origin)
	otherSigner, _ := logSigner(t, "other.example/log")
	ws := []witness{{"w1.example", vectorKey("w1")}, {"w2.example", vectorKey("w2")}, {"w3.example", vectorKey("w3")}}
	wkeys := []string{ws[0].vkey(), ws[1].vkey(), ws[2].vkey()}
	request := []byte(`{"model":"sim-1","messages":[{"role":"user","content":"Hello, vectors"}]}`)
	response := []byte(`{"id":"chatcmpl-v","object":"chat.completion","model":"sim-1","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}]}`)
	stream := []byte("data: {\"id\":\"chatcmpl-s\",\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: [DONE]\n\n")
	streamed := append(append([]byte{}, stream...), ": custody-receipt req-4\n\n"...)

	salt := func(kind, id string) [32]byte { return sha256.Sum256([]byte(kind + "/" + id)) }
	var leaves [][]byte
	for i := range 7 {
		id := fmt.Sprintf("req-%d", i)
		resp := response
		if i == 4 {
			resp = stream
		}
		tx := &custody.Transaction{ID: id, Tenant: "5f0c6a8d3b2e4f1a9c7d6e5b4a392817", Time: time.Date(2026, 12, 1, 12, 0, i, 0, time.UTC),
			Endpoint: "chat.completions", Stream: i == 4, RequestedModel: "sim-1", Provider: "sim", UpstreamModel: "sim-1", ResponseModel: "sim-1",
			ResponseID: "chatcmpl-v", FallbackChain: []string{"sim"}, Policy: "default", Decision: "sim", Status: 200,
			PromptTokensLocal: 12, PromptTokensReported: 12, CompletionTokens: 3, Verdict: custody.Verified,
			RequestCommitment: Commit(salt("request", id), request), ResponseCommitment: Commit(salt("response", id), resp)}
		tx.Pass(custody.CheckModel, "")
		if i >= 5 {
			cl := uint64(1)
			tx.ConfigLeaf = &cl // a version 2 leaf, naming its rules
		}
		if i == 6 { // a version 3 leaf: an eval case, custody's own traffic
			tx.Tenant, tx.Canary, tx.Sender = "0e5d2c7b9a8f6e4d3c2b1a0f9e8d7c6b", true, custody.SenderEval
		}
		leaf, err := EncodeLeaf(tx)
		if i == 1 { // the rules: a config leaf
			leaf, err = EncodeConfigLeaf(ConfigLeaf{Reason: "start", Version: "v1.0.0", Digest: strings.Repeat("ab", 32),
				Policies: json.RawMessage(`{"default":{"fallback":"deny","require_pinned":true}}`), Previous: -1}, time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC))
		}
		if err != nil {
			t.Fatal(err)
		}
		leaves = append(leaves, leaf)
	}
	body := fmt.Sprintf("%s\n%d\n%s\n", origin, len(leaves), base64.StdEncoding.EncodeToString(mth(leaves)))
	signed, err := note.Sign(&note.Note{Text: body}, signer)
	if err != nil {
		t.Fatal(err)
	}
	const ts = 1796126400 // 2026-12-01T12:00:00Z
	cosigned := string(signed) + ws[0].cosign(body, ts) + ws[1].cosign(body, ts) + ws[2].cosign(body, ts)

	receipt := func(i int, cp string) *Receipt {
		id := fmt.Sprintf("req-%d", i)
		sig, err := signer.Sign(SignedMessage(leaves[i]))
		if err != nil {
			t.Fatal(err)
		}
		rs, ps := salt("request", id), salt("response", id)
		r := &Receipt{V: ReceiptVersion, RequestID: id, Origin: origin, KeyID: fmt.Sprintf("%s+%08x", origin, signer.KeyHash()),
			Index: uint64(i), Leaf: leaves[i], RequestSalt: rs[:], ResponseSalt: ps[:], Signature: sig}
		if cp != "" {
			r.Checkpoint, r.InclusionProof = cp, path(i, leaves)
		}
		return r
	}
	out := map[string]*Vector{}
	add := func(name, desc string, input any, req, resp []byte, quorum int, want string, cosigners ...string) {
		kind := "receipt"
		if _, ok := input.(*Bundle); ok {
			kind = "bundle"
		}
		b, err := json.Marshal(input)
		if err != nil {
			t.Fatal(err)
		}
		if cosigners == nil {
			cosigners = []string{}
		}
		out[name] = &Vector{Description: desc, Kind: kind, Input: b, LogKey: logKey, WitnessKeys: wkeys, WitnessQuorum: quorum,
			Request: req, Response: resp, Want: want, Cosigners: cosigners}
	}
	bundle := func(r *Receipt) *Bundle {
		b, err := NewBundle(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	edit := func(r *Receipt, f func(r *Receipt)) *Receipt {
		c := *r
		c.Leaf, c.Signature = bytes.Clone(r.Leaf), bytes.Clone(r.Signature)
		c.RequestSalt, c.ResponseSalt = bytes.Clone(r.RequestSalt), bytes.Clone(r.ResponseSalt)
		c.InclusionProof = nil
		for _, h := range r.InclusionProof {
			c.InclusionProof = append(c.InclusionProof, bytes.Clone(h))
		}
		c.RulesProof = nil
		for _, h := range r.RulesProof {
			c.RulesProof = append(c.RulesProof, bytes.Clone(h))
		}
		f(&c)
		return &c
	}
	good := receipt(3, cosigned)
	all := []string{"w1.example", "w2.example", "w3.example"}

	add("valid-receipt", "an integrated receipt with the request and response bytes it commits to; no witness policy", good, request, response, 0, "valid")
	add("valid-receipt-cosigned", "the same receipt under a 2-of-3 witness policy: all three cosigned", good, request, response, 2, "valid", all...)
	add("valid-bundle", "the offline bundle of that receipt (C2SP tlog-proof inside), 2-of-3 witnesses", bundle(good), request, response, 2, "valid", all...)
	add("valid-bundle-stream", "a streamed response's bundle: the commitment covers the bytes before the ': custody-receipt' line", bundle(receipt(4, cosigned)), request, streamed, 2, "valid", all...)
	add("valid-bundle-leaf-v2", "the last leaf, version 2 (it names config leaf 1)", bundle(receipt(5, cosigned)), request, response, 2, "valid", all...)
	add("valid-bundle-leaf-v3-eval", "the last leaf, version 3: an eval case's (sender eval), naming config leaf 1", bundle(receipt(6, cosigned)), request, response, 2, "valid", all...)
	withRules := func(r *Receipt) *Receipt { r.Rules, r.RulesProof = leaves[1], path(1, leaves); return r }
	add("valid-bundle-rules", "leaf 5 with the config leaf it names (the policy in force) and its proof", bundle(withRules(receipt(5, cosigned))), request, response, 2, "valid", all...)
	out["valid-bundle-rules"].Policy = json.RawMessage(`{"fallback":"deny","require_pinned":true}`)
	add("wrong-rules-proof", "the rules' inclusion proof altered", bundle(edit(withRules(receipt(5, cosigned)), func(r *Receipt) { r.RulesProof[0][3] ^= 1 })), nil, nil, 0, "invalid")
	add("wrong-rules", "another leaf presented as the rules, with the rules' proof", bundle(edit(withRules(receipt(5, cosigned)), func(r *Receipt) { r.Rules = leaves[2] })), nil, nil, 0, "invalid")
	add("valid-bundle-first-leaf", "the bundle of leaf 0 (a proof of three hashes)", bundle(receipt(0, cosigned)), request, response, 3, "valid", all...)
	twoOf3 := string(signed) + ws[0].cosign(body, ts) + ws[2].cosign(body, ts)
	add("valid-bundle-two-cosignatures", "cosigned by w1 and w3 only: meets the 2-of-3 quorum", bundle(receipt(3, twoOf3)), nil, nil, 2, "valid", "w1.example", "w3.example")
	add("pending-receipt", "a receipt fresh from the gateway: valid signature, no checkpoint or proof yet", receipt(3, ""), request, response, 0, "not_integrated")

	add("forged-signature", "one byte of the gateway's signature flipped", bundle(edit(good, func(r *Receipt) { r.Signature[5] ^= 1 })), nil, nil, 0, "invalid")
	add("forged-signature-receipt", "one byte of a receipt's signature flipped", edit(good, func(r *Receipt) { r.Signature[60] ^= 1 }), nil, nil, 0, "invalid")
	add("wrong-leaf", "one byte of the signed leaf changed", bundle(edit(good, func(r *Receipt) {
		r.Leaf = bytes.Replace(r.Leaf, []byte(`"status":200`), []byte(`"status":201`), 1)
	})), nil, nil, 0, "invalid")
	add("wrong-leaf-resigned", "another leaf, validly signed, with this leaf's proof: not in the tree", bundle(edit(good, func(r *Receipt) {
		r.Leaf = bytes.Replace(r.Leaf, []byte(`"completion_tokens":3`), []byte(`"completion_tokens":4`), 1)
		r.Signature, _ = signer.Sign(SignedMessage(r.Leaf))
	})), nil, nil, 0, "invalid")
	add("wrong-request-id", "the receipt's request id is another request's", bundle(edit(good, func(r *Receipt) { r.RequestID = "req-2" })), nil, nil, 0, "invalid")
	add("wrong-proof", "one byte of one inclusion proof hash flipped", bundle(edit(good, func(r *Receipt) { r.InclusionProof[1][0] ^= 1 })), nil, nil, 0, "invalid")
	add("wrong-proof-short", "the inclusion proof's last hash dropped", bundle(edit(good, func(r *Receipt) { r.InclusionProof = r.InclusionProof[:len(r.InclusionProof)-1] })), nil, nil, 0, "invalid")
	add("wrong-index", "the proof of leaf 3 presented for index 2", bundle(edit(good, func(r *Receipt) { r.Index = 2 })), nil, nil, 0, "invalid")
	add("wrong-checkpoint-root", "the checkpoint's root hash changed (its signature no longer holds)", bundle(edit(good, func(r *Receipt) {
		r.Checkpoint = strings.Replace(r.Checkpoint, base64.StdEncoding.EncodeToString(mth(leaves)), base64.StdEncoding.EncodeToString(mth(leaves[:5])), 1)
	})), nil, nil, 0, "invalid")
	fakeBody := fmt.Sprintf("%s\n%d\n%s\n", origin, 5, base64.StdEncoding.EncodeToString(mth(leaves[:5])))
	otherCP, err := note.Sign(&note.Note{Text: fakeBody}, otherSigner)
	if err != nil {
		t.Fatal(err)
	}
	add("wrong-checkpoint-key", "a checkpoint of the same origin signed by a key that is not the log's", bundle(edit(good, func(r *Receipt) { r.Checkpoint = string(otherCP) })), nil, nil, 0, "invalid")
	smaller, err := note.Sign(&note.Note{Text: fakeBody}, signer)
	if err != nil {
		t.Fatal(err)
	}
	add("wrong-checkpoint-tree", "a genuine log checkpoint of another tree (size 5), with all cosignatures, for the proof of size 6", bundle(edit(good, func(r *Receipt) {
		r.Checkpoint = string(smaller) + ws[0].cosign(fakeBody, ts) + ws[1].cosign(fakeBody, ts) + ws[2].cosign(fakeBody, ts)
	})), nil, nil, 2, "invalid")
	add("checkpoint-not-witnessed", "a checkpoint the log signed but no witness saw (a split view), under a 2-of-3 policy", bundle(receipt(3, string(signed))), nil, nil, 2, "invalid")
	add("checkpoint-one-cosignature", "only w2 cosigned: short of the 2-of-3 quorum", bundle(receipt(3, string(signed)+ws[1].cosign(body, ts))), nil, nil, 2, "invalid")
	forgedCosig := ws[1].cosign(body, ts)
	fc := []byte(forgedCosig)
	fc[len(fc)-6] ^= 'A' ^ 'B'
	if fc[len(fc)-6] == forgedCosig[len(forgedCosig)-6] {
		t.Fatal("no change")
	}
	add("bad-cosignature", "w2's cosignature altered (w1 and w3 are good): a forged cosignature is refused, not ignored", bundle(receipt(3, string(signed)+ws[0].cosign(body, ts)+string(fc)+ws[2].cosign(body, ts))), nil, nil, 2, "invalid")
	add("cosignature-other-tree", "w1's and w3's cosignatures of another tree pasted under this checkpoint", bundle(receipt(3, string(signed)+ws[0].cosign(fakeBody, ts)+ws[2].cosign(fakeBody, ts))), nil, nil, 2, "invalid")
	add("wrong-request-bytes", "request bytes that are not the ones committed to (one character)", bundle(good), bytes.Replace(request, []byte("Hello"), []byte("Jello"), 1), response, 0, "invalid")
	add("wrong-response-bytes", "response bytes that are not the ones committed to", bundle(good), request, append(bytes.Clone(response), ' '), 0, "invalid")
	add("another-requests-bytes", "the stream's bytes presented for a non-stream receipt", bundle(good), request, streamed, 0, "invalid")
	add("wrong-salt", "the request salt changed: the bytes no longer open the commitment", bundle(edit(good, func(r *Receipt) { r.RequestSalt[0] ^= 1 })), request, nil, 0, "invalid")
	bad := bundle(good)
	bad.Proof = strings.Replace(bad.Proof, "c2sp.org/tlog-proof@v1", "c2sp.org/tlog-proof@v2", 1)
	add("malformed-proof", "a tlog-proof with an unknown header", bad, nil, nil, 0, "invalid")

	if err := os.MkdirAll(vectorDir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(vectorDir, "*.json"))
	for _, f := range old {
		os.Remove(f)
	}
	for name, v := range out {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(vectorDir, name+".json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
