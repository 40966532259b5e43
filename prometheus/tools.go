//go:build tools

// Package prometheus pins the source of the Prometheus server used by the
// integration tests and `demo`. It is built with `go build` by
// scripts/build-prometheus.sh; this file keeps it in go.mod/go.sum.
package prometheus

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
