package hosttools

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/host"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
)

// Windows Time service values the model does not derive: what W32Time
// reports of a healthy client synchronised over a LAN. Printed as
// simulated.
const (
	// The peer's stratum is unknown; a LAN time server that follows a
	// public stratum-2 pool is at 3, and w32tm prints its own stratum
	// as the peer's + 1 only when the peer's is known.
	simulatedStratum = 3
	// W32Time's default poll exponent on a client (MinPollInterval 10,
	// https://learn.microsoft.com/windows-server/networking/windows-time-service/windows-time-service-tools-and-settings).
	pollExponent = 10
)

// maxPhaseCorrection is how far W32Time will step the clock on its own
// (MaxPosPhaseCorrection/MaxNegPhaseCorrection, 172800 s on a server,
// same page as above); a clock further off is left alone.
const maxPhaseCorrection = 48 * time.Hour

// w32tm is `w32tm /query /status` (and /query /source): the Windows Time
// service's state. The source is the peer the node preparation configures
// with /manualpeerlist (the node network gateway's DNS name, 0x8 = client
// mode) or, when the input names none, Windows' default for a workgroup
// machine, time.windows.com,0x9. Times are the node's clock: the control
// plane's shifted by the HostState's clockOffset.
func w32tm(c *model.Cluster, h *host.Host, args []string, now time.Time) Result {
	q := strings.ToLower(strings.Join(args, " "))
	if q != "/query /status" && q != "/query /source" {
		return Result{Stderr: "kubectl-hybrid: w32tm /query /status and /query /source are emulated\n", Code: 1}
	}
	peer, addr, configured := plan.TimeServer(c)
	flags := "0x8"
	var notes []string
	if !configured {
		peer, flags = "time.windows.com", "0x9"
		notes = append(notes, "the input names no time server (the node network's DNS has no name for the gateway): the source is Windows' default for a workgroup machine")
	}
	source := peer + "," + flags
	if q == "/query /source" {
		return Result{Stdout: source + "\n", Stderr: noteLines(notes)}
	}
	clock := now.Add(h.ClockOffset)
	// The last poll: polls happen every 2^pollExponent seconds.
	poll := time.Duration(1<<pollExponent) * time.Second
	last := clock.Truncate(poll)
	if h.ClockOffset != 0 {
		note := fmt.Sprintf("the node's clock runs %s off the control plane's (HostState spec.clockOffset)", h.ClockOffset)
		if h.ClockOffset > maxPhaseCorrection || h.ClockOffset < -maxPhaseCorrection {
			note += "; W32Time does not step a clock more than 48h off (MaxPos/MaxNegPhaseCorrection), so it stays off"
		}
		notes = append(notes, note)
	}
	ref := "0x00000000 (unspecified)"
	if a, err := netip.ParseAddr(addr); err == nil && a.Is4() {
		b := a.As4()
		ref = fmt.Sprintf("0x%02X%02X%02X%02X (source IP:  %s)", b[0], b[1], b[2], b[3], a)
	} else {
		notes = append(notes, "ReferenceId: the peer's address is not in the model")
	}
	notes = append(notes, fmt.Sprintf("simulated: Leap Indicator, Stratum %d (the peer's stratum is not in the model), Precision, Root Delay, Root Dispersion, Poll Interval and the last sync time (the last %ds poll)", simulatedStratum, 1<<pollExponent))
	var b strings.Builder
	b.WriteString("Leap Indicator: 0(no warning)\n")
	fmt.Fprintf(&b, "Stratum: %d (secondary reference - syncd by (S)NTP)\n", simulatedStratum)
	b.WriteString("Precision: -23 (119.209ns per tick)\n")
	b.WriteString("Root Delay: 0.0312500s\n")
	b.WriteString("Root Dispersion: 0.0781250s\n")
	fmt.Fprintf(&b, "ReferenceId: %s\n", ref)
	fmt.Fprintf(&b, "Last Successful Sync Time: %s\n", last.Format("1/2/2006 3:04:05 PM"))
	fmt.Fprintf(&b, "Source: %s\n", source)
	fmt.Fprintf(&b, "Poll Interval: %d (%ds)\n\n", pollExponent, 1<<pollExponent)
	return Result{Stdout: b.String(), Stderr: noteLines(notes)}
}

func noteLines(notes []string) string {
	var b strings.Builder
	for _, n := range notes {
		b.WriteString("kubectl-hybrid: " + n + "\n")
	}
	return b.String()
}
