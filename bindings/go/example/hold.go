// SPDX-License-Identifier: MIT

package main

// A holding queue on the wire: a TCP proxy in front of the target that
// forwards every chunk a sender writes only after a delay (settable at
// run time: GET /delay?ms=N on its control address), and keeps
// forwarding what it holds after the sender has gone.  A request whose
// sender timed out is then still on its way, and arrives later: the case
// where "not seen by the target" is not "not sent".

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

func cmdHold(args []string) error {
	fs := flag.NewFlagSet("hold", flag.ExitOnError)
	listen := fs.String("listen", "", "listen address")
	to := fs.String("to", "", "the target's address")
	control := fs.String("control", "", "control address (GET /delay?ms=N)")
	fs.Parse(args)
	logger := log.New(os.Stderr, "hold ", log.Ltime|log.Lmicroseconds)
	var delay, held atomic.Int64
	if *control != "" {
		mux := http.NewServeMux()
		mux.HandleFunc("/delay", func(w http.ResponseWriter, r *http.Request) {
			if ms, err := strconv.Atoi(r.URL.Query().Get("ms")); err == nil && ms >= 0 {
				delay.Store(int64(ms))
				logger.Printf("delay %d ms", ms)
			}
			fmt.Fprintf(w, "{\"delay_ms\":%d,\"held\":%d}\n", delay.Load(), held.Load())
		})
		go func() { logger.Println(http.ListenAndServe(*control, mux)) }()
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go func(c net.Conn) {
			up, err := net.DialTimeout("tcp", *to, time.Second)
			if err != nil {
				c.Close()
				return
			}
			go func() { io.Copy(c, up); c.Close() }()
			type chunk struct {
				at time.Time
				b  []byte
			}
			q := make(chan chunk, 1024)
			go func() { // the queue: each chunk leaves its delay after it came
				for ch := range q {
					time.Sleep(time.Until(ch.at))
					up.Write(ch.b)
					held.Add(-1)
				}
				up.(*net.TCPConn).CloseWrite()
			}()
			buf := make([]byte, 32<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					held.Add(1)
					q <- chunk{time.Now().Add(time.Duration(delay.Load()) * time.Millisecond), append([]byte(nil), buf[:n]...)}
				}
				if err != nil {
					close(q)
					return
				}
			}
		}(c)
	}
}
