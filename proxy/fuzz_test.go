package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Seed corpora live in testdata/fuzz/<FuzzName>/; run e.g.
//
//	go test ./proxy -run '^$' -fuzz FuzzSession -fuzztime 30s

func FuzzParseStartup(f *testing.F) {
	f.Add(startupBody(3<<16, "user\x00postgres\x00database\x00db\x00\x00"))
	f.Add(startupBody(3<<16|2, "user\x00u\x00_pq_.x\x00y\x00\x00"))
	f.Add(startupBody(2<<16, ""))
	f.Add([]byte{0, 3, 0, 0, 'u', 0})
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := parseStartup(body)
		if err != nil || p.major != 3 {
			return
		}
		// What the proxy forwards parses back to the same parameters.
		enc := p.encode()
		if int(binary.BigEndian.Uint32(enc)) != len(enc) {
			t.Fatalf("bad length word")
		}
		q, err := parseStartup(enc[4:])
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		if len(q.params) != len(p.params) {
			t.Fatalf("params changed: %v vs %v", p.params, q.params)
		}
		for k, v := range p.params {
			if q.params[k] != v {
				t.Fatalf("param %q changed", k)
			}
		}
	})
}

func startupBody(v uint32, params string) []byte {
	b := binary.BigEndian.AppendUint32(nil, v)
	return append(b, params...)
}

func FuzzReadFrames(f *testing.F) {
	f.Add([]byte{0, 0, 0, 8, 4, 210, 22, 47})
	f.Add([]byte{'Q', 0, 0, 0, 5, 0, 'S', 0, 0, 0, 4})
	f.Add([]byte{'B', 0, 0, 0, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		var buf []byte
		r := bufio.NewReaderSize(bytes.NewReader(data), 16)
		_, _ = readStartupPacket(r, &buf)
		r = bufio.NewReaderSize(bytes.NewReader(data), 16)
		w := bufio.NewWriter(io.Discard)
		for {
			typ, n, err := readHeader(r)
			if err != nil {
				return
			}
			if n > 1<<16 {
				return // the session refuses these before reading
			}
			if typ == 'Q' {
				if _, err := readBody(r, &buf, n); err != nil {
					return
				}
				continue
			}
			if err := copyBody(w, r, n); err != nil {
				return
			}
		}
	})
}

func FuzzSASLInitial(f *testing.F) {
	f.Add([]byte("SCRAM-SHA-256\x00\x00\x00\x00\x20n,,n=,r=abcdefghijklmnopqrstuvwxyz"), true)
	f.Add([]byte("SCRAM-SHA-256-PLUS\x00\x00\x00\x00\x05p=tls"), false)
	f.Add([]byte("SCRAM-SHA-256\x00\x00\x00\x00\x05y,,n="), true)
	f.Fuzz(func(t *testing.T, b []byte, plus bool) {
		_ = checkSASLInitial(b, plus)
		_ = isFatal(b)
	})
}

// FuzzSession feeds arbitrary bytes as a client's message stream after a
// good start-up, through a real Server to a scripted upstream. The session
// must end (no hang, no panic) and the server must shut down cleanly.
func FuzzSession(f *testing.F) {
	msg := func(m pgproto3.FrontendMessage) []byte { b, _ := m.Encode(nil); return b }
	cat := func(ms ...pgproto3.FrontendMessage) []byte {
		var b []byte
		for _, m := range ms {
			b = append(b, msg(m)...)
		}
		return b
	}
	f.Add(cat(&pgproto3.Query{String: "select 1"}))
	f.Add(cat(&pgproto3.Query{String: "SHOW atrium.version"}))
	f.Add(cat(&pgproto3.Parse{Query: "SHOW atrium.version"}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{MaxRows: 1}, &pgproto3.Execute{}, &pgproto3.Sync{}))
	f.Add(cat(&pgproto3.Parse{Name: "a", Query: "SHOW atrium.version"}, &pgproto3.Parse{Name: "a", Query: "SHOW atrium.version"}, &pgproto3.Bind{PreparedStatement: "a"}, &pgproto3.Sync{}))
	f.Add(cat(&pgproto3.Parse{Query: "select 1"}, &pgproto3.Bind{}, &pgproto3.Parse{Name: "v", Query: "show atrium.version"}, &pgproto3.Bind{PreparedStatement: "v", Parameters: [][]byte{nil}}, &pgproto3.Execute{}, &pgproto3.Sync{}))
	f.Add(cat(&pgproto3.Parse{Name: "v", Query: "show atrium.version"}, &pgproto3.Bind{PreparedStatement: "v", ResultFormatCodes: []int16{1}}, &pgproto3.Execute{}, &pgproto3.Close{ObjectType: 'S', Name: "v"}, &pgproto3.Flush{}, &pgproto3.Sync{}))
	f.Add(cat(&pgproto3.FunctionCall{Function: 1}, &pgproto3.Terminate{}))
	f.Add([]byte{'Q', 0, 0, 0, 4})
	f.Add([]byte{'P', 0, 0, 0, 6, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		up := &fakeUpstream{}
		srv, err := NewServer(Config{UpstreamSSLMode: "disable", MaxMessageSize: 1 << 16}, Options{Dial: up.dial, Version: "fuzz"})
		if err != nil {
			t.Fatal(err)
		}
		l := newPipeListener()
		done := make(chan error, 1)
		go func() { done <- srv.Serve(context.Background(), l) }()
		nc := l.dial()
		fe := pgproto3.NewFrontend(nc, nc)
		fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "u"}})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		drained := make(chan struct{})
		go func() { // a client reads everything it is sent
			_, _ = io.Copy(io.Discard, nc)
			close(drained)
		}()
		_ = nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_, _ = nc.Write(data)
		_ = nc.Close()
		<-drained
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Fatalf("session did not end: %v", err)
		}
		<-done
		up.wg.Wait()
	})
}
