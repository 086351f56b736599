package netproxy

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// SOCKS5 (RFC 1928), the CONNECT command only, without authentication:
// what socks5h:// clients (curl, git, pip, cargo through ALL_PROXY) send.
const (
	socksVersion      = 5
	socksNoAuth       = 0
	socksNoAcceptable = 0xff
	socksConnect      = 1
	atypIPv4          = 1
	atypDomain        = 3
	atypIPv6          = 4

	repSucceeded        = 0
	repNotAllowed       = 2
	repHostUnreachable  = 4
	repCmdNotSupported  = 7
	repAtypNotSupported = 8
)

func (p *Proxy) socks(c *prefixConn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	var hdr [2]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil || hdr[0] != socksVersion {
		return
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return
	}
	method := byte(socksNoAcceptable)
	for _, m := range methods {
		if m == socksNoAuth {
			method = socksNoAuth
		}
	}
	if _, err := c.Write([]byte{socksVersion, method}); err != nil || method != socksNoAuth {
		return
	}
	var req [4]byte
	if _, err := io.ReadFull(c, req[:]); err != nil || req[0] != socksVersion {
		return
	}
	var host string
	switch req[3] {
	case atypIPv4, atypIPv6:
		n := 4
		if req[3] == atypIPv6 {
			n = 16
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(c, b); err != nil {
			return
		}
		a, _ := netip.AddrFromSlice(b)
		host = a.Unmap().String()
	case atypDomain:
		var l [1]byte
		if _, err := io.ReadFull(c, l[:]); err != nil {
			return
		}
		b := make([]byte, l[0])
		if _, err := io.ReadFull(c, b); err != nil {
			return
		}
		host = string(b)
	default:
		socksReply(c, repAtypNotSupported, nil)
		return
	}
	var pb [2]byte
	if _, err := io.ReadFull(c, pb[:]); err != nil {
		return
	}
	port := int(binary.BigEndian.Uint16(pb[:]))
	if req[1] != socksConnect {
		socksReply(c, repCmdNotSupported, nil)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.DialTimeout)
	up, err := p.dial(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	cancel()
	if err != nil {
		var re *RefusedError
		switch {
		case errors.As(err, &re):
			socksReply(c, repNotAllowed, nil)
		default:
			socksReply(c, repHostUnreachable, nil)
		}
		return
	}
	var bound net.Addr = up.LocalAddr()
	if err := socksReply(c, repSucceeded, bound); err != nil {
		up.Close()
		return
	}
	_ = c.SetDeadline(time.Time{})
	p.tunnel(c, up, nil)
}

func socksReply(c net.Conn, rep byte, bound net.Addr) error {
	out := []byte{socksVersion, rep, 0}
	ap := netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
	if ta, ok := bound.(*net.TCPAddr); ok {
		ap = ta.AddrPort()
	}
	a := ap.Addr().Unmap()
	if a.Is4() {
		out = append(out, atypIPv4)
	} else {
		out = append(out, atypIPv6)
	}
	out = append(out, a.AsSlice()...)
	out = binary.BigEndian.AppendUint16(out, ap.Port())
	_, err := c.Write(out)
	return err
}
