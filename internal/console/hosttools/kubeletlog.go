package hosttools

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/host"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// kubeletPath is where the join installs the kubelet on Windows
// (PrepareNode.ps1), as Get-Process shows it.
const kubeletPath = `C:\k\kubelet.exe`

// getContent is `Get-Content PATH -Tail N` (aliases gc, cat, type) of the
// kubelet's log files on a Windows node. nssm sends the kubelet's stderr,
// where klog writes every line, to kubelet.err.log; stdout
// (kubelet.out.log) stays empty. The lines are those the twin derives:
// the kubelet's startup lines (cmd/kubelet/app/server.go "Kubelet
// version", pkg/kubelet/kubelet_node_status.go "Successfully registered
// node") and, when the engine found the kubelet's requests failing (a
// clock outside the API server certificate's validity), the node status
// loop's errors (kubelet_node_status.go updateNodeStatus: five tries,
// each "Error updating node status, will retry", then "Unable to update
// node status"), one round every nodeStatusUpdateFrequency. Timestamps
// are the node's clock; klog's source line numbers, the PID and the
// times within a round are simulated.
func getContent(c *model.Cluster, h *host.Host, args []string, now time.Time) Result {
	var file string
	tail := -1
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch low := strings.ToLower(a); {
		case low == "-tail" || low == "-last":
			if i+1 >= len(args) {
				return Result{Stderr: "Get-Content : Missing an argument for parameter 'Tail'. Specify a parameter of type 'System.Int32' and try again.\n", Code: 1}
			}
			n, err := strconv.Atoi(args[i+1])
			if err != nil {
				return Result{Stderr: fmt.Sprintf("Get-Content : Cannot bind parameter 'Tail'. Cannot convert value %q to type \"System.Int32\".\n", args[i+1]), Code: 1}
			}
			tail = n
			i++
		case low == "-path":
			if i+1 < len(args) {
				file = args[i+1]
				i++
			}
		case strings.HasPrefix(a, "-"):
			return Result{Stderr: "kubectl-hybrid: Get-Content " + a + " is not emulated; emulated: Get-Content PATH -Tail N\n", Code: 1}
		default:
			file = a
		}
	}
	switch {
	case strings.EqualFold(file, host.KubeletOutLog):
		return Result{Stderr: "kubectl-hybrid: klog writes every line to stderr, so kubelet.out.log is empty\n"}
	case !strings.EqualFold(file, host.KubeletErrLog):
		return Result{Stderr: fmt.Sprintf("kubectl-hybrid: Get-Content of %s is not emulated; emulated: %s and %s\n", file, host.KubeletErrLog, host.KubeletOutLog), Code: 1}
	}
	if tail < 0 {
		return Result{Stderr: "kubectl-hybrid: the log's whole history is not modelled; Get-Content " + host.KubeletErrLog + " -Tail N is emulated\n", Code: 1}
	}
	lines, notes := kubeletLog(c, h, now, tail)
	if tail < len(lines) {
		lines = lines[len(lines)-tail:]
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return Result{Stdout: b.String(), Stderr: noteLines(notes)}
}

// kubeletLog is the kubelet's log as the twin derives it, with at least
// want lines of the repeating part when there is one.
func kubeletLog(c *model.Cluster, h *host.Host, now time.Time, want int) ([]string, []string) {
	pid := pid(h.Node, "kubelet", kubeletPath, "0", "1")
	klog := func(sev byte, t time.Time, src, msg string) string {
		// klog's header: Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg
		// (k8s.io/klog/v2 klog.go formatHeader).
		return fmt.Sprintf("%c%s %7d %s] %s", sev, t.Format("0102 15:04:05.000000"), pid, src, msg)
	}
	clock := now.Add(h.ClockOffset)
	notes := []string{"simulated: klog's source line numbers, the kubelet's PID (as Get-Process shows it) and the times of the lines; the log holds only the lines the twin derives"}
	if s, ok := h.Service(hybrid.ServiceKubelet); ok && !s.Running() {
		notes = append(notes, "the kubelet service is stopped; the lines it wrote before it stopped are not modelled")
		return nil, notes
	}
	if h.KubeletStuck {
		notes = append(notes, "the kubelet is stuck after the vSwitch came up; what it logged is not modelled")
	}
	start := clock.Add(-time.Hour).Truncate(time.Second)
	node := strconv.Quote(h.Node)
	lines := []string{
		klog('I', start, "server.go:525", fmt.Sprintf(`"Kubelet version" kubeletVersion=%q`, h.Info.KubeletVersion)),
		klog('I', start.Add(2*time.Second), "kubelet_node_status.go:75", `"Attempting to register node" node=`+node),
		klog('I', start.Add(2*time.Second+40*time.Millisecond), "kubelet_node_status.go:78", `"Successfully registered node" node=`+node),
	}
	failure := c.KubeletRequestError(h.Node)
	if failure == "" {
		return lines, notes
	}
	every := 10 * time.Second
	if cfg := h.Kubelet.Config; cfg != nil && cfg.NodeStatusUpdateFrequency.Duration > 0 {
		every = cfg.NodeStatusUpdateFrequency.Duration
	}
	const tries = 5 // kubelet_node_status.go nodeStatusUpdateRetry
	rounds := want/(tries+1) + 1
	errText := strconv.Quote(fmt.Sprintf("error getting node %s: %s", node, failure))
	for r := rounds; r >= 1; r-- {
		at := clock.Truncate(every).Add(-time.Duration(r-1) * every)
		for i := 0; i < tries; i++ {
			lines = append(lines, klog('E', at.Add(time.Duration(i)*10*time.Millisecond), "kubelet_node_status.go:549", `"Error updating node status, will retry" err=`+errText))
		}
		lines = append(lines, klog('E', at.Add(tries*10*time.Millisecond), "kubelet_node_status.go:536", `"Unable to update node status" err="update node status exceeds retry count"`))
	}
	notes = append(notes, "the node status errors are the engine's: the kubelet's requests to the API server fail")
	return lines, notes
}
