//go:build tools

// Package helm pins the source of the Helm CLI used by the chart's tests
// (lint, template, install, uninstall). It is built with `go build` by
// scripts/build-helm.sh; this file keeps it in go.mod/go.sum.
package helm

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
