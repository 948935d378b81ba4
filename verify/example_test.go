package verify_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/custody-gateway/custody/verify"
)

// readVector reads one file of the test vectors in testdata: a receipt
// custody issued for request req-2 (with its checkpoint and inclusion
// proof), the request and response bytes it commits to, and the log's
// verifier key.
func readVector(name string) []byte {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		log.Fatal(err)
	}
	return b
}

// Verify a receipt with the pinned key: its signature, that the request
// and response bytes open its commitments, and its inclusion proof under
// its own checkpoint. Passing a LogSource (OpenSource of the log's
// directory or URL) instead of nil also proves the leaf under the log's
// current checkpoint.
func ExampleVerifyReceipt() {
	key, err := verify.ParseVerifier(strings.TrimSpace(string(readVector("verifier"))))
	if err != nil {
		log.Fatal(err)
	}
	r, err := verify.ParseReceipt(readVector("receipt.json"))
	if err != nil {
		log.Fatal(err)
	}
	request, response := readVector("request.json"), readVector("response.sse")

	err = verify.VerifyReceipt(context.Background(), nil, key, r, request, response)
	fmt.Printf("request %s, index %d: %v\n", r.RequestID, r.Index, err)

	// Any other request bytes are refused.
	other := bytes.Replace(request, []byte(`"user"`), []byte(`"system"`), 1)
	err = verify.VerifyReceipt(context.Background(), nil, key, r, other, response)
	fmt.Println(err, errors.Is(err, verify.ErrInvalid))
	// Output:
	// request req-2, index 2: <nil>
	// invalid: the request bytes do not open the request commitment true
}

// Verify the response a client received: the bytes of its body open the
// receipt's response commitment, whatever follows the receipt line that
// ends a stream. The leaf tells what custody recorded for it.
func ExampleVerifyReceiptWith_response() {
	key, err := verify.ParseVerifier(strings.TrimSpace(string(readVector("verifier"))))
	if err != nil {
		log.Fatal(err)
	}
	r, err := verify.ParseReceipt(readVector("receipt.json"))
	if err != nil {
		log.Fatal(err)
	}
	response := readVector("response.sse")
	res, err := verify.VerifyReceiptWith(context.Background(), nil, key, verify.Options{}, r, nil, response)
	if err != nil {
		log.Fatal(err)
	}
	tx := res.Transaction
	fmt.Println(tx.Verdict, tx.ResponseModel, tx.Stream)

	// One byte of the answer changed, and the response is refused.
	changed := bytes.Clone(response)
	changed[len(verify.StripReceiptLine(changed))/2] ^= 1
	_, err = verify.VerifyReceiptWith(context.Background(), nil, key, verify.Options{}, r, nil, changed)
	fmt.Println(err)
	// Output:
	// verified glm-5.3-0827 true
	// invalid: the response bytes do not open the response commitment
}

// StripReceiptLine cuts a stream's body at the receipt comment custody
// adds once the transaction is recorded: the bytes before it are those
// the response commitment covers.
func ExampleStripReceiptLine() {
	body := []byte("data: {\"choices\":[]}\n\ndata: [DONE]\n\n: custody-receipt 01KB\n\n")
	fmt.Printf("%q\n", verify.StripReceiptLine(body))
	// Output:
	// "data: {\"choices\":[]}\n\ndata: [DONE]\n\n"
}
