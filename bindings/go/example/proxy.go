// SPDX-License-Identifier: MIT

package main

// A TCP proxy in front of a dqlite node that loses the answer to COMMIT:
// it reads dqlite's wire protocol (an 8-byte version, then messages of an
// 8-byte header, whose first 4 bytes count the body's 8-byte words, and
// whose 5th byte is the type), and when the client sends EXEC_SQL "COMMIT"
// it marks the next message from the node (the answer: the protocol has
// one request in flight per connection).  Every K-th marked answer that is
// a success (RESULT: the COMMIT took effect) is dropped, and the client's
// connection is closed (or, with -hang, left open and silent: the client
// must give up by its own deadline).

import (
	"bytes"
	"encoding/binary"
	"flag"
	"io"
	"log"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

const (
	reqExecSQL     = 8
	respResult     = 6
	respFailure    = 0
	messageHeader  = 8
	protocolPrefix = 8
)

func readMessage(r io.Reader) (hdr [messageHeader]byte, body []byte, err error) {
	if _, err = io.ReadFull(r, hdr[:]); err != nil {
		return
	}
	words := binary.LittleEndian.Uint32(hdr[0:4])
	body = make([]byte, int(words)*8)
	_, err = io.ReadFull(r, body)
	return
}

func cmdProxy(args []string) error {
	fs := flag.NewFlagSet("proxy", flag.ExitOnError)
	listen := fs.String("listen", "", "listen address")
	to := fs.String("to", "", "the node's address")
	every := fs.Int("drop-every", 1, "drop every K-th answer to a COMMIT that took effect")
	hang := fs.Bool("hang", false, "after dropping, keep the connection open and silent")
	fs.Parse(args)
	logger := log.New(os.Stderr, "proxy ", log.Ltime|log.Lmicroseconds)
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	var commits, dropped int64
	for {
		cc, err := l.Accept()
		if err != nil {
			return err
		}
		go func(cc net.Conn) {
			defer cc.Close()
			sc, err := net.DialTimeout("tcp", *to, 2*time.Second)
			if err != nil {
				return
			}
			defer sc.Close()
			var mu sync.Mutex
			marked := 0 // answers to COMMIT still to come
			go func() { // client -> node
				defer sc.Close()
				var ver [protocolPrefix]byte
				if _, err := io.ReadFull(cc, ver[:]); err != nil {
					return
				}
				if _, err := sc.Write(ver[:]); err != nil {
					return
				}
				for {
					hdr, body, err := readMessage(cc)
					if err != nil {
						return
					}
					if hdr[4] == reqExecSQL && len(body) > 8 &&
						bytes.HasPrefix(bytes.ToUpper(body[8:]), []byte("COMMIT")) {
						mu.Lock()
						marked++
						mu.Unlock()
					}
					if _, err := sc.Write(append(hdr[:], body...)); err != nil {
						return
					}
				}
			}()
			for { // node -> client
				hdr, body, err := readMessage(sc)
				if err != nil {
					return
				}
				mu.Lock()
				isCommit := marked > 0
				if isCommit {
					marked--
				}
				mu.Unlock()
				if isCommit && hdr[4] == respResult {
					n := atomic.AddInt64(&commits, 1)
					if n%int64(*every) == 0 {
						d := atomic.AddInt64(&dropped, 1)
						logger.Printf("dropped the answer to a COMMIT that took effect (%d of %d)", d, n)
						if *hang {
							io.Copy(io.Discard, cc) // until the client gives up
						}
						return
					}
				}
				if _, err := cc.Write(append(hdr[:], body...)); err != nil {
					return
				}
			}
		}(cc)
	}
}
