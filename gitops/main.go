// Command gitops-health reads a Kubernetes object as JSON on stdin and prints, as one JSON line,
// the health GitOps tools would show for it:
//
//	gitops-health argocd SCRIPT.lua   {"status":"Healthy|Progressing|Degraded|…","message":"…"}
//	gitops-health kstatus             {"status":"Current|InProgress|Failed|…","message":"…"}
//
// argocd runs a resource health script the way Argo CD does (util/lua/lua.go of argo-cd): a
// gopher-lua state with only the package, base and table libraries open (no string, math or os
// library unless the customization sets useOpenLibs, which this script does not need), a one-second
// time limit, the object in the global `obj` (integers as Lua numbers), and the returned table read
// as {status, message}; a status Argo CD does not know becomes Unknown, as there.
//
// kstatus computes the status with sigs.k8s.io/cli-utils/pkg/kstatus/status.Compute, the library
// Flux (kustomize-controller, helm-controller health checks) and kpt use.
//
// It exits 2 on a usage error and 1 when the object or the script cannot be read or run.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

type health struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

func main() {
	if len(os.Args) < 2 || (os.Args[1] == "argocd" && len(os.Args) != 3) || (os.Args[1] == "kstatus" && len(os.Args) != 2) {
		fmt.Fprintln(os.Stderr, "usage: gitops-health argocd SCRIPT.lua < object.json | gitops-health kstatus < object.json")
		os.Exit(2)
	}
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(in); err != nil {
		fail(fmt.Errorf("reading the object: %w", err))
	}
	var out health
	switch os.Args[1] {
	case "argocd":
		script, err := os.ReadFile(os.Args[2])
		if err != nil {
			fail(err)
		}
		out, err = argocd(obj, string(script))
		if err != nil {
			fail(err)
		}
	case "kstatus":
		res, err := status.Compute(obj)
		if err != nil {
			fail(err)
		}
		out = health{Status: res.Status.String(), Message: res.Message}
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q (argocd or kstatus)\n", os.Args[1])
		os.Exit(2)
	}
	line, err := json.Marshal(out)
	if err != nil {
		fail(err)
	}
	fmt.Println(string(line))
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "gitops-health: %v\n", err)
	os.Exit(1)
}

// argoStatuses are the health status codes Argo CD accepts from a script.
var argoStatuses = map[string]bool{
	"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true,
}

func argocd(obj *unstructured.Unstructured, script string) (health, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
	} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return health{}, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, obj.Object))
	if err := l.DoString(script); err != nil {
		return health{}, err
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return health{}, fmt.Errorf("expect table output from Lua script, not %s", l.Get(-1).Type())
	}
	h := health{Status: lua.LVAsString(ret.RawGetString("status")), Message: lua.LVAsString(ret.RawGetString("message"))}
	if !argoStatuses[h.Status] {
		return health{Status: "Unknown", Message: "Lua returned an invalid health status"}, nil
	}
	return h, nil
}

// toLua converts a decoded JSON value as Argo CD's decodeValue does.
func toLua(l *lua.LState, value any) lua.LValue {
	switch v := value.(type) {
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case []any:
		t := l.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(toLua(l, item))
		}
		return t
	case map[string]any:
		t := l.CreateTable(0, len(v))
		for k, item := range v {
			t.RawSetH(lua.LString(k), toLua(l, item))
		}
		return t
	}
	return lua.LNil
}
