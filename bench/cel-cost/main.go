// CEL validation cost of one LogPipeline write in the apiserver's own validator
// (k8s.io/apiextensions-apiserver at the bed's Kubernetes version), per CRD file: ns, allocations
// and bytes per write for an update of the given object (old = new, as on a status write, so the
// transition rules run too). Issue 18: every write of a LogPipeline (its create, the finalizer
// patch, each status write) evaluates every rule of the CRD on the whole object.
//
//	bench/cel-cost.sh [OBJECT.json] [CRD.yaml ...]
package main

import (
	"context"
	"fmt"
	"os"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	kjson "k8s.io/apimachinery/pkg/util/json"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// validator compiles the CEL rules of the first version of the CRD in file, as the apiserver does.
func validator(file string) (*cel.Validator, *schema.Structural) {
	b, err := os.ReadFile(file)
	if err != nil {
		panic(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(b, &crd); err != nil {
		panic(err)
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, &internal, nil); err != nil {
		panic(err)
	}
	s, err := schema.NewStructural(&internal)
	if err != nil {
		panic(err)
	}
	return cel.NewValidator(s, true, celconfig.PerCallLimit), s
}

func main() {
	var obj map[string]interface{}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	// The apiserver's decoder: integers stay int64 (encoding/json would make them float64).
	if err := kjson.Unmarshal(b, &obj); err != nil {
		panic(err)
	}
	ctx := context.Background()
	for round := 0; round < 3; round++ {
		for _, file := range os.Args[2:] {
			v, s := validator(file)
			if errs, _ := v.Validate(ctx, nil, s, obj, obj, celconfig.RuntimeCELCostBudget); len(errs) > 0 {
				panic(errs.ToAggregate())
			}
			r := testing.Benchmark(func(bb *testing.B) {
				bb.ReportAllocs()
				for i := 0; i < bb.N; i++ {
					v.Validate(ctx, nil, s, obj, obj, celconfig.RuntimeCELCostBudget)
				}
			})
			fmt.Printf("%s\t%d ns/op\t%d allocs/op\t%d B/op\n", file, r.NsPerOp(), r.AllocsPerOp(), r.AllocedBytesPerOp())
		}
	}
}
