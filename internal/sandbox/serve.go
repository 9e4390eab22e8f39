package sandbox

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// ServeOptions is one namespace's tiny server: TCP ports answer an HTTP
// request with the server's name, anything else with the name and an echo;
// UDP ports answer every datagram the same way; DNS answers A queries on
// UDP and TCP 53 from the zone.
type ServeOptions struct {
	Name string
	TCP  []int
	UDP  []int
	// Zone, when not nil, is served as DNS on port 53.
	Zone []ZoneEntry
	// Addr is the address to listen on ("" = all of the namespace's).
	Addr string
}

// probeGreeting is what the probe client sends first; the DNS server
// answers it as the other servers do, so a TCP or UDP probe of port 53
// sees who answered.
const probeGreeting = "kubectl-hybrid sandbox probe\n"

// Reply is the first line a server sends: who answered and whom it saw.
func Reply(name string, from net.Addr) string {
	return fmt.Sprintf("%s from %s\n", name, from)
}

// ReadZone reads a zone file written by Up.
func ReadZone(path string) ([]ZoneEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var z []ZoneEntry
	if err := json.Unmarshal(b, &z); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return z, nil
}

// Serve listens on every port, calls ready once all listen, and serves
// until ctx ends.
func Serve(ctx context.Context, o ServeOptions, ready func()) error {
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	var wg sync.WaitGroup
	tcp := append([]int(nil), o.TCP...)
	udp := append([]int(nil), o.UDP...)
	if o.Zone != nil {
		tcp, udp = append(tcp, 53), append(udp, 53)
	}
	for _, p := range tcp {
		l, err := net.Listen("tcp4", net.JoinHostPort(o.Addr, fmt.Sprint(p)))
		if err != nil {
			return err
		}
		closers = append(closers, l)
		dns := o.Zone != nil && p == 53
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					serveConn(c, o.Name, dns, o.Zone)
				}()
			}
		}()
	}
	for _, p := range udp {
		c, err := net.ListenPacket("udp4", net.JoinHostPort(o.Addr, fmt.Sprint(p)))
		if err != nil {
			return err
		}
		closers = append(closers, c)
		dns := o.Zone != nil && p == 53
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 65535)
			for {
				n, from, err := c.ReadFrom(buf)
				if err != nil {
					return
				}
				var out []byte
				if dns && string(buf[:n]) != probeGreeting {
					out = answerDNS(buf[:n], o.Zone)
				} else {
					out = append([]byte(Reply(o.Name, from)), buf[:n]...)
				}
				if out != nil {
					_, _ = c.WriteTo(out, from)
				}
			}
		}()
	}
	if ready != nil {
		ready()
	}
	<-ctx.Done()
	for _, c := range closers {
		c.Close()
	}
	closers = nil
	wg.Wait()
	return nil
}

var httpMethods = []string{"GET ", "HEAD ", "POST ", "PUT ", "DELETE ", "OPTIONS ", "PATCH "}

// serveConn serves one TCP connection: DNS when dns is set, unless the
// connection opens with the probe's greeting (a DNS length prefix is never
// that large).
func serveConn(c net.Conn, name string, dns bool, zone []ZoneEntry) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	if dns {
		if head, err := r.Peek(2); err != nil || string(head) != probeGreeting[:2] {
			serveDNSStream(r, c, zone)
			return
		}
	}
	serveStream(r, c, name)
}

// serveStream answers an HTTP request with 200 and the reply line; any
// other bytes with the reply line and an echo of the first line.
func serveStream(r *bufio.Reader, c net.Conn, name string) {
	line, err := r.ReadString('\n')
	if err != nil && line == "" {
		return
	}
	reply := Reply(name, c.RemoteAddr())
	for _, m := range httpMethods {
		if strings.HasPrefix(line, m) {
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(reply), reply)
			return
		}
	}
	_, _ = io.WriteString(c, reply+line)
}

// serveDNSStream is DNS over TCP: two-byte length, message (RFC 1035 4.2.2).
func serveDNSStream(r io.Reader, c net.Conn, zone []ZoneEntry) {
	var l [2]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return
	}
	msg := make([]byte, binary.BigEndian.Uint16(l[:]))
	if _, err := io.ReadFull(r, msg); err != nil {
		return
	}
	out := answerDNS(msg, zone)
	if out == nil {
		return
	}
	binary.BigEndian.PutUint16(l[:], uint16(len(out)))
	_, _ = c.Write(append(l[:], out...))
}

// answerDNS answers one query from the zone: A records for a name it
// holds, its rcode otherwise, NXDOMAIN for a name it does not hold; nil
// for a message that is not a query.
func answerDNS(msg []byte, zone []ZoneEntry) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil || h.Response {
		return nil
	}
	q, err := p.Question()
	if err != nil {
		return nil
	}
	name := strings.ToLower(strings.TrimSuffix(q.Name.String(), "."))
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RCode: dnsmessage.RCodeNameError}
	var addrs []netip.Addr
	for _, z := range zone {
		if z.Name == name {
			rh.RCode = dnsmessage.RCode(z.Rcode)
			if q.Type == dnsmessage.TypeA {
				for _, a := range z.Addrs {
					if ip, err := netip.ParseAddr(a); err == nil && ip.Is4() {
						addrs = append(addrs, ip)
					}
				}
			}
		}
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if b.StartQuestions() != nil || b.Question(q) != nil || b.StartAnswers() != nil {
		return nil
	}
	for _, a := range addrs {
		if b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 30}, dnsmessage.AResource{A: a.As4()}) != nil {
			return nil
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	return out
}

// Probe outcomes as the client sees them.
const (
	OutDelivered = "delivered"
	OutRefused   = "refused"
	OutTimeout   = "timeout"
	OutNoRoute   = "unreachable"
)

// ProbeResult is what one client probe saw.
type ProbeResult struct {
	Outcome string `json:"outcome"`
	// Reply is the server's first line ("pod ns/name from ip:port").
	Reply string `json:"reply,omitempty"`
	// Rcode and Addrs are a DNS answer.
	Rcode int      `json:"rcode,omitempty"`
	Addrs []string `json:"addrs,omitempty"`
	Error string   `json:"error,omitempty"`
}

func classify(err error) ProbeResult {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return ProbeResult{Outcome: OutRefused, Error: err.Error()}
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return ProbeResult{Outcome: OutNoRoute, Error: err.Error()}
	case errors.As(err, &ne) && ne.Timeout():
		return ProbeResult{Outcome: OutTimeout, Error: err.Error()}
	}
	return ProbeResult{Outcome: OutNoRoute, Error: err.Error()}
}

// ProbeStream connects over TCP and reads the server's reply line.
func ProbeStream(addr string, timeout time.Duration) ProbeResult {
	c, err := net.DialTimeout("tcp4", addr, timeout)
	if err != nil {
		return classify(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, probeGreeting); err != nil {
		return classify(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return classify(err)
	}
	return ProbeResult{Outcome: OutDelivered, Reply: strings.TrimSpace(line)}
}

// ProbeDatagram sends one UDP datagram and waits for the reply.
func ProbeDatagram(addr string, timeout time.Duration) ProbeResult {
	c, err := net.Dial("udp4", addr)
	if err != nil {
		return classify(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, probeGreeting); err != nil {
		return classify(err)
	}
	buf := make([]byte, 65535)
	n, err := c.Read(buf)
	if err != nil {
		return classify(err)
	}
	line, _, _ := strings.Cut(string(buf[:n]), "\n")
	return ProbeResult{Outcome: OutDelivered, Reply: line}
}

// ProbeDNS asks server (ip:port) for name's A records over UDP.
func ProbeDNS(server, name string, timeout time.Duration) ProbeResult {
	qn, err := dnsmessage.NewName(strings.TrimSuffix(name, ".") + ".")
	if err != nil {
		return ProbeResult{Outcome: OutNoRoute, Error: err.Error()}
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 0x6b68, RecursionDesired: true})
	_ = b.StartQuestions()
	_ = b.Question(dnsmessage.Question{Name: qn, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
	msg, err := b.Finish()
	if err != nil {
		return ProbeResult{Outcome: OutNoRoute, Error: err.Error()}
	}
	c, err := net.Dial("udp4", server)
	if err != nil {
		return classify(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write(msg); err != nil {
		return classify(err)
	}
	buf := make([]byte, 65535)
	n, err := c.Read(buf)
	if err != nil {
		return classify(err)
	}
	var p dnsmessage.Parser
	h, err := p.Start(buf[:n])
	if err != nil {
		return ProbeResult{Outcome: OutNoRoute, Error: "bad DNS answer: " + err.Error()}
	}
	res := ProbeResult{Outcome: OutDelivered, Rcode: int(h.RCode)}
	if err := p.SkipAllQuestions(); err != nil {
		return res
	}
	for {
		rh, err := p.AnswerHeader()
		if err != nil {
			break
		}
		if rh.Type == dnsmessage.TypeA {
			a, err := p.AResource()
			if err != nil {
				break
			}
			res.Addrs = append(res.Addrs, netip.AddrFrom4(a.A).String())
		} else if p.SkipAnswer() != nil {
			break
		}
	}
	return res
}
