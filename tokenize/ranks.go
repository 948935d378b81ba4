package tokenize

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"
	"sync"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// rankTable maps a token's bytes to its BPE rank, which is also its id in
// tiktoken's encodings. It is built once per encoding and never written
// after, so any number of counters share it.
type rankTable map[string]uint32

// lazyRanks parses one embedded .tiktoken file on first use.
type lazyRanks struct {
	file  string
	once  sync.Once
	ranks rankTable
	err   error
}

func (l *lazyRanks) get() (rankTable, error) {
	l.once.Do(func() {
		data, err := assets.Assets.ReadFile(l.file)
		if err != nil {
			l.err = fmt.Errorf("reading embedded %s: %w", l.file, err)
			return
		}
		l.ranks, l.err = parseTiktoken(data)
		if l.err != nil {
			l.err = fmt.Errorf("parsing embedded %s: %w", l.file, l.err)
		}
	})
	return l.ranks, l.err
}

// parseTiktoken reads the .tiktoken format: one "base64(token) rank" a line.
func parseTiktoken(data []byte) (rankTable, error) {
	t := make(rankTable, bytes.Count(data, []byte{'\n'})+1)
	buf := make([]byte, 0, 256)
	for lineNo := 1; len(data) > 0; lineNo++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			continue
		}
		sp := bytes.IndexByte(line, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("line %d: no rank", lineNo)
		}
		n := base64.StdEncoding.DecodedLen(sp)
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		m, err := base64.StdEncoding.Decode(buf[:n], line[:sp])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		rank, err := strconv.ParseUint(string(line[sp+1:]), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		t[string(buf[:m])] = uint32(rank)
	}
	return t, nil
}
