package main

import (
	"math"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// newMetrics returns the registry that GET /metrics serves, with Go's, the
// process's and the build's (go_build_info) collectors and the store's
// commits, and the store's
// OnCommit hook that feeds them. (httpapi adds the request metrics.)
func newMetrics() (*prometheus.Registry, func(writes int, took time.Duration)) {
	reg := prometheus.NewRegistry()
	commit := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "selfcma_store_commit_duration_seconds",
		Help:    "Time of one bbolt write transaction, fsync included; its count is the number of commits.",
		Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1},
	})
	writes := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "selfcma_store_writes_total",
		Help: "Writes committed (each create, tell, stop and delete is one; claims are held in memory); over the commits, how many shared a commit.",
	})
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector(), commit, writes)
	return reg, func(n int, took time.Duration) {
		commit.Observe(took.Seconds())
		writes.Add(float64(n))
	}
}

// scanPeriod is how often the gauges of the sessions by status are
// recounted (httpapi.Lifecycle.Watch).
const scanPeriod = 30 * time.Second

// fileSize is the gauge of the database file's size, read on each scrape
// (a stat).
func fileSize(path string) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "selfcma_store_file_size_bytes",
		Help: "Size of the database file (bbolt's, free pages included).",
	}, func() float64 {
		fi, err := os.Stat(path)
		if err != nil {
			return math.NaN()
		}
		return float64(fi.Size())
	})
}
