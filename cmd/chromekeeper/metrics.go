package main

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/chromekeeper/chromekeeper/session"
)

// metrics are the server's Prometheus metrics, served at /metrics.
type metrics struct {
	registry *prometheus.Registry
	calls    *prometheus.CounterVec
	errors   *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(sessions *session.Manager) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chromekeeper_tool_calls_total", Help: "Tool calls by tool.",
		}, []string{"tool"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chromekeeper_tool_errors_total", Help: "Tool calls that answered an error, by tool and code.",
		}, []string{"tool", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "chromekeeper_tool_call_seconds", Help: "Tool call latency by tool.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"tool"}),
	}
	stat := func(name, help string, typ prometheus.ValueType, value func(session.Stats) int64) prometheus.Collector {
		desc := prometheus.NewDesc(name, help, nil, nil)
		return collectorFunc{desc: desc, collect: func(ch chan<- prometheus.Metric) {
			ch <- prometheus.MustNewConstMetric(desc, typ, float64(value(sessions.Stats())))
		}}
	}
	m.registry.MustRegister(
		m.calls, m.errors, m.latency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		stat("chromekeeper_sessions", "Conversations known now.", prometheus.GaugeValue, func(s session.Stats) int64 { return s.Conversations }),
		stat("chromekeeper_browsers_running", "Chrome instances running now.", prometheus.GaugeValue, func(s session.Stats) int64 { return s.BrowsersRunning }),
		stat("chromekeeper_browser_launches_total", "Chrome launches.", prometheus.CounterValue, func(s session.Stats) int64 { return s.Launches }),
		stat("chromekeeper_crashes_healed_total", "Chrome relaunches after a crash or hang.", prometheus.CounterValue, func(s session.Stats) int64 { return s.Heals }),
		stat("chromekeeper_browser_reaps_total", "Chrome instances closed by the idle reaper.", prometheus.CounterValue, func(s session.Stats) int64 { return s.Reaps }),
	)
	return m
}

// middleware counts every tool call, its error code and its latency.
func (m *metrics) middleware(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		res, err := next(ctx, req)
		tool := req.Params.Name
		m.calls.WithLabelValues(tool).Inc()
		m.latency.WithLabelValues(tool).Observe(time.Since(start).Seconds())
		if err != nil {
			m.errors.WithLabelValues(tool, string(session.CodeInternal)).Inc()
		} else if res != nil && res.IsError {
			m.errors.WithLabelValues(tool, errorCode(res)).Inc()
		}
		return res, err
	}
}

// errorCode reads the code of an error answer from its structured content.
func errorCode(res *mcp.CallToolResult) string {
	var answer struct {
		Error struct{ Code string } `json:"error"`
	}
	if b, err := json.Marshal(res.StructuredContent); err == nil && json.Unmarshal(b, &answer) == nil && answer.Error.Code != "" {
		return answer.Error.Code
	}
	return "UNKNOWN"
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// collectorFunc is a Prometheus collector of one metric computed on scrape.
type collectorFunc struct {
	desc    *prometheus.Desc
	collect func(chan<- prometheus.Metric)
}

func (c collectorFunc) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }
func (c collectorFunc) Collect(ch chan<- prometheus.Metric) { c.collect(ch) }
