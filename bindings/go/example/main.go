// SPDX-License-Identifier: MIT

// idem-example: a tool-call service on a three-node go-dqlite cluster,
// with idem in every node (idem.Register), and the pieces that
// test/cluster/run.sh puts around it.
//
//	idem-example node   -name N -dir DIR -db ADDR [-join ADDR,...] -http ADDR -target URL [-faults]
//	idem-example target -http ADDR [-delay MS]
//	idem-example proxy  -listen ADDR -to ADDR -drop-every K [-hang]
//	idem-example hold   -listen ADDR -to ADDR -control ADDR
//	idem-example call   -cluster ADDR,... [-via ADDR=PROXY] -target URL -n N -prefix P
//	idem-example load   -nodes URL,... -keys N -prefix P -workers W -deadline MS -budget S -out FILE
//	idem-example check  -cluster ADDR,... -target URL -prefix P[,P...] [-loads FILE,...]
//	idem-example leader -cluster ADDR,...
//
// A node serves POST /call with a JSON tool call {"who", "conv", "tool",
// "args"}: tool "order" is local (an order row in the same database),
// tool "ship" is external (a POST to the target with the call's
// Idempotency-Key).  See doc/cluster.md.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: idem-example node|target|proxy|hold|call|load|check|leader [flags] (see main.go)")
		os.Exit(2)
	}
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	switch cmd {
	case "node":
		err = cmdNode(args)
	case "target":
		err = cmdTarget(args)
	case "proxy":
		err = cmdProxy(args)
	case "hold":
		err = cmdHold(args)
	case "call":
		err = cmdCall(args)
	case "load":
		err = cmdLoad(args)
	case "check":
		err = cmdCheck(args)
	case "leader":
		err = cmdLeader(args)
	default:
		err = fmt.Errorf("unknown command %q", cmd)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "idem-example %s: %v\n", cmd, err)
		os.Exit(1)
	}
}
