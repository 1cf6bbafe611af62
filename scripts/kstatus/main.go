// Command kstatus prints the kstatus verdict (sigs.k8s.io/cli-utils/pkg/kstatus/status, the
// library Flux and the cli-utils applier use) of each Kubernetes object read from stdin as one
// JSON document per line: one JSON line {"status":..., "message":...} per object. The tests use
// it to check that a LogPipeline's status reads as Current, InProgress or Failed to GitOps tools.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

type verdict struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	Error   string `json:"error,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		if len(in.Bytes()) == 0 {
			continue
		}
		var v verdict
		// UnmarshalJSON keeps integers as int64, as the library expects (a plain map would hold float64).
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(in.Bytes()); err != nil {
			v.Error = err.Error()
		} else if res, err := status.Compute(u); err != nil {
			v.Error = err.Error()
		} else {
			v.Status, v.Message = string(res.Status), res.Message
		}
		if err := out.Encode(v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
