package sandbox

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// freePorts finds n free loopback ports (TCP and UDP both free).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var out []int
	for len(out) < n {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if u, err := net.ListenPacket("udp4", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			u.Close()
			out = append(out, p)
		}
	}
	return out
}

func startServer(t *testing.T, o ServeOptions) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() { done <- Serve(ctx, o, func() { close(ready) }) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func TestTheServerAnswersTCPUDPAndHTTPWithItsName(t *testing.T) {
	ports := freePorts(t, 2)
	startServer(t, ServeOptions{Name: "pod demo/a", TCP: ports[:1], UDP: ports[1:], Addr: "127.0.0.1"})
	tcp := ProbeStream(fmt.Sprintf("127.0.0.1:%d", ports[0]), time.Second)
	if tcp.Outcome != OutDelivered || !strings.HasPrefix(tcp.Reply, "pod demo/a from 127.0.0.1:") {
		t.Errorf("tcp: %+v", tcp)
	}
	udp := ProbeDatagram(fmt.Sprintf("127.0.0.1:%d", ports[1]), time.Second)
	if udp.Outcome != OutDelivered || !strings.HasPrefix(udp.Reply, "pod demo/a from 127.0.0.1:") {
		t.Errorf("udp: %+v", udp)
	}
	c, err := net.Dial("tcp4", fmt.Sprintf("127.0.0.1:%d", ports[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	buf := make([]byte, 512)
	_ = c.SetDeadline(time.Now().Add(time.Second))
	n, _ := c.Read(buf)
	if got := string(buf[:n]); !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || !strings.Contains(got, "pod demo/a from") {
		t.Errorf("http: %q", got)
	}
}

func TestAClosedPortIsRefused(t *testing.T) {
	p := freePorts(t, 1)[0]
	if r := ProbeStream(fmt.Sprintf("127.0.0.1:%d", p), time.Second); r.Outcome != OutRefused {
		t.Errorf("got %+v", r)
	}
}

func TestTheDNSAnswerComesFromTheZone(t *testing.T) {
	zone := []ZoneEntry{
		{Name: "hello.demo.svc.cluster.local", Rcode: 0, Addrs: []string{"10.97.141.163"}},
		{Name: "two.demo.svc.cluster.local", Rcode: 0, Addrs: []string{"172.21.0.1", "172.21.0.2"}},
	}
	// Port 53 is privileged and may be taken: answerDNS is checked
	// through a query built by the client's own code on a free port.
	ports := freePorts(t, 1)
	conn, err := net.ListenPacket("udp4", fmt.Sprintf("127.0.0.1:%d", ports[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			if out := answerDNS(buf[:n], zone); out != nil {
				_, _ = conn.WriteTo(out, from)
			}
		}
	}()
	for _, tc := range []struct {
		name, q, want string
		rcode         int
	}{
		{"a name of the zone gets its address", "hello.demo.svc.cluster.local", "10.97.141.163", 0},
		{"a name with two addresses gets both", "two.demo.svc.cluster.local.", "172.21.0.1,172.21.0.2", 0},
		{"the name is matched without regard to case", "HELLO.demo.svc.cluster.local", "10.97.141.163", 0},
		{"a name outside the zone is NXDOMAIN", "nope.demo.svc.cluster.local", "", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ProbeDNS(conn.LocalAddr().String(), tc.q, time.Second)
			if r.Outcome != OutDelivered || r.Rcode != tc.rcode || strings.Join(r.Addrs, ",") != tc.want {
				t.Errorf("got %+v, want rcode %d addrs %q", r, tc.rcode, tc.want)
			}
		})
	}
}

func FuzzAnswerDNSNeverPanics(f *testing.F) {
	f.Add([]byte{0x6b, 0x68, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 'a', 0, 0, 1, 0, 1})
	f.Add([]byte{})
	zone := []ZoneEntry{{Name: "a", Addrs: []string{"10.0.0.1", "bad"}}}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = answerDNS(b, zone)
	})
}
