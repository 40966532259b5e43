//go:build tools

// Package controlplane pins the sources of the local control plane binaries
// (kube-apiserver, kubectl, etcd). They are built with `go build` by
// scripts/build-control-plane.sh; this file keeps them in go.mod/go.sum.
package controlplane

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
