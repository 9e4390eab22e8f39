package serve

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
)

// metrics writes the Prometheus text exposition format, version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/): HELP
// and TYPE lines, then one sample a line, label values escaped.
func (s *Server) metrics(w http.ResponseWriter, _ *http.Request) error {
	var b bytes.Buffer
	if err := s.WriteMetrics(&b); err != nil {
		return err
	}
	w.Header().Set("Content-Type", promType)
	_, err := w.Write(b.Bytes())
	return err
}

// family is one metric with its samples.
type family struct {
	name, help, typ string
	samples         []sample
}

type sample struct {
	labels [][2]string
	value  float64
}

// WriteMetrics writes the metrics of the twin in service.
func (s *Server) WriteMetrics(w io.Writer) error {
	fams := []family{
		{name: "kubectl_hybrid_rebuilds_total", help: "Builds of the twin that succeeded, the first included.", typ: "counter",
			samples: []sample{{value: float64(s.rebuilds.Load())}}},
		{name: "kubectl_hybrid_rebuild_failures_total", help: "Builds of the twin that failed (the previous twin kept answering).", typ: "counter",
			samples: []sample{{value: float64(s.failures.Load())}}},
	}
	failing := 0.0
	if s.lastErr.Load() != nil {
		failing = 1
	}
	fams = append(fams, family{name: "kubectl_hybrid_last_rebuild_failed", help: "1 when the last rebuild failed and an older twin answers.", typ: "gauge",
		samples: []sample{{value: failing}}})
	t := s.cur.Load()
	if t != nil {
		fams = append(fams,
			family{name: "kubectl_hybrid_last_rebuild_timestamp_seconds", help: "When the twin in service was built (Unix time).", typ: "gauge",
				samples: []sample{{value: float64(t.built.UnixNano()) / 1e9}}},
			family{name: "kubectl_hybrid_last_rebuild_duration_seconds", help: "How long reading the input and building the twin in service took.", typ: "gauge",
				samples: []sample{{value: t.took.Seconds()}}},
		)
		blocks := blockFamilies(t)
		fams = append(fams, nodeFamily(t), blocks[0], blocks[1])
		rep, err := t.report()
		if err != nil {
			return err
		}
		counts := map[[2]string]int{}
		// Every rule that ran is a series, zero included: an alert on a
		// rule must see it go back to zero.
		for _, r := range rep.Rules {
			counts[[2]string{r.ID, string(r.Severity)}] += 0
		}
		for _, f := range rep.Findings {
			counts[[2]string{f.RuleID, string(f.Severity)}]++
		}
		fam := family{name: "kubectl_hybrid_findings", help: "Findings of check on the twin in service, by rule and severity (suppressed ones left out).", typ: "gauge"}
		for k, n := range counts {
			fam.samples = append(fam.samples, sample{labels: [][2]string{{"rule", k[0]}, {"severity", k[1]}}, value: float64(n)})
		}
		fams = append(fams, fam)
	}
	for _, f := range fams {
		sort.Slice(f.samples, func(i, j int) bool { return labelKey(f.samples[i]) < labelKey(f.samples[j]) })
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", f.name, escapeHelp(f.help), f.name, f.typ)
		for _, smp := range f.samples {
			fmt.Fprintf(w, "%s%s %s\n", f.name, labelText(smp.labels), formatValue(smp.value))
		}
	}
	return nil
}

func nodeFamily(t *twin) family {
	counts := map[[2]string]int{}
	for _, n := range t.c.Nodes {
		os := n.Labels[corev1.LabelOSStable]
		if os == "" {
			os = "unknown"
		}
		ready := "unknown"
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ready = strings.ToLower(string(c.Status))
			}
		}
		counts[[2]string{os, ready}]++
	}
	f := family{name: "kubectl_hybrid_nodes", help: "Nodes of the twin by operating system (kubernetes.io/os) and Ready condition (true, false, unknown).", typ: "gauge"}
	for k, n := range counts {
		f.samples = append(f.samples, sample{labels: [][2]string{{"os", k[0]}, {"ready", k[1]}}, value: float64(n)})
	}
	return f
}

// blockFamilies are the IPAM blocks' addresses by state, per block, and
// the count of blocks, as get ipamblocks counts them (report.IPAMBlockUsage).
func blockFamilies(t *twin) [2]family {
	addrs := family{name: "kubectl_hybrid_ipam_block_addresses", help: "Addresses of each Calico IPAM block by state: allocated, reserved (Calico for Windows' reserved handle) and free.", typ: "gauge"}
	for _, b := range t.c.IPAMBlocks {
		node := ""
		if b.Spec.Affinity != nil {
			node = strings.TrimPrefix(*b.Spec.Affinity, "host:")
		}
		allocated, reserved := report.IPAMBlockUsage(b)
		free := len(b.Spec.Allocations) - allocated - reserved
		for _, st := range []struct {
			state string
			n     int
		}{{"allocated", allocated}, {"reserved", reserved}, {"free", free}} {
			addrs.samples = append(addrs.samples, sample{labels: [][2]string{{"cidr", b.Spec.CIDR}, {"node", node}, {"state", st.state}}, value: float64(st.n)})
		}
	}
	count := family{name: "kubectl_hybrid_ipam_blocks", help: "Calico IPAM blocks in the twin.", typ: "gauge",
		samples: []sample{{value: float64(len(t.c.IPAMBlocks))}}}
	return [2]family{count, addrs}
}

func labelKey(s sample) string {
	var b strings.Builder
	for _, l := range s.labels {
		b.WriteString(l[0] + "\x00" + l[1] + "\x00")
	}
	return b.String()
}

func labelText(labels [][2]string) string {
	if len(labels) == 0 {
		return ""
	}
	parts := make([]string, len(labels))
	for i, l := range labels {
		parts[i] = l[0] + `="` + escapeLabel(l[1]) + `"`
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// The exposition format escapes \, " and newline in label values, and \
// and newline in HELP text.
var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }
func escapeHelp(s string) string  { return helpEscaper.Replace(s) }

func formatValue(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
