package nodeagent_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/digitalocean/go-libvirt"
	"github.com/digitalocean/go-libvirt/socket/dialers"
	"libvirt.org/go/libvirtxml"

	"github.com/virtflow/virtflow/agent/consoleproto"
	"github.com/virtflow/virtflow/agent/hypervisor"
	"github.com/virtflow/virtflow/agent/nodeagent"
	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/demo/fleet"
	"github.com/virtflow/virtflow/domain/identity"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/apitoken"
	"github.com/virtflow/virtflow/ent/auditlog"
	"github.com/virtflow/virtflow/ent/rolebinding"
	"github.com/virtflow/virtflow/gateway/console"
	"github.com/virtflow/virtflow/internal/testkit/gqltest"
	"github.com/virtflow/virtflow/internal/testkit/guestimage"
)

// TestConsoleOverWebsocketsToARealGuest boots a real Linux guest (busybox shell on its
// serial console) under libvirt's qemu:///system as the domain of a VM the API placed on
// the node, runs the agent's console relay against the real server, and opens the VM's
// console over a real websocket as a member of the VM's tenant: a command typed into the
// websocket runs in the guest and its output comes back. It logs the keystroke round trip
// (websocket → server → agent → libvirt → guest → back). Another tenant's member gets
// not found, a platform viewer forbidden, no token unauthenticated, and the session left an
// audit record naming who opened it.
//
// It skips only when a part is missing (qemu-system-x86_64, a kernel, busybox, libvirtd's
// qemu driver), naming it.
func TestConsoleOverWebsocketsToARealGuest(t *testing.T) {
	kernel, busybox := realGuestParts(t, false)
	socket := libvirtSocket(t)
	qemu, err := hypervisor.NewLibvirt(context.Background(), hypervisor.LibvirtConfig{Socket: socket, URI: "qemu:///system", DomainType: hypervisor.DomainTypeQEMU})
	if err != nil {
		t.Skipf("libvirtd at %s has no qemu driver (qemu:///system: %v)", socket, err)
	}
	t.Cleanup(func() { _ = qemu.Close() })

	st := startStack(t, 0)
	ctx := gqltest.System()
	api := &nodeagent.Client{URL: st.base, Token: gqltest.AdminToken}
	var created struct{ CreateVirtualMachine struct{ ID string } }
	if err := api.Do(ctx, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": "console-vm", "tenantID": gqltest.ID(st.site.Tenant), "regionID": gqltest.ID(st.site.Region),
			"flavorID": gqltest.ID(st.flavor.ID)}}, &created); err != nil {
		t.Fatal(err)
	}
	vmID, _ := strconv.Atoi(created.CreateVirtualMachine.ID)
	waitPlaced(t, st.env.Client, vmID)

	// The VM's domain: the shell guest, named as the agent names the VM's domain.
	name := hypervisor.DomainName(int64(vmID))
	bootShellGuest(t, socket, name, kernel.Image, busybox)

	tok, err := fleet.IssueAgentToken(ctx, st.env.Client, st.env.Identity, st.node)
	if err != nil {
		t.Fatal(err)
	}
	relayCtx, stopRelay := context.WithCancel(st.runCtx)
	relayDone := make(chan struct{})
	go func() {
		defer close(relayDone)
		(&nodeagent.ConsoleRelay{APIURL: st.base, Token: tok, Consoles: qemu, Log: st.log}).Run(relayCtx)
	}()
	t.Cleanup(func() { stopRelay(); <-relayDone })

	member := tenantToken(t, st.env.Client, st.site.Tenant, authz.RoleTenantMember, "console-member")
	wsURL := "ws" + strings.TrimSuffix(strings.TrimPrefix(st.base, "http"), "/query") + "/api/virtual-machines/" + strconv.Itoa(vmID) + "/console"

	// Refusals, before anything is relayed.
	other, err := st.env.Client.Tenant.Create().SetName(st.site.Prefix + "-other").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		token string
		code  websocket.StatusCode
	}{
		{"another tenant's member", tenantToken(t, st.env.Client, other.ID, authz.RoleTenantMember, "console-other"), consoleproto.CodeNotFound},
		{"a platform viewer", tenantToken(t, st.env.Client, 0, authz.RoleViewer, "console-viewer"), consoleproto.CodeForbidden},
		{"a bad token", "vf_not_a_token", consoleproto.CodeUnauth},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialConsole(t, wsURL, tc.token)
			_, _, err := c.Read(context.Background())
			if got := websocket.CloseStatus(err); got != tc.code {
				t.Fatalf("console as %s: closed with %d (%v), want %d", tc.name, got, err, tc.code)
			}
		})
	}

	// The member's session: wait for the guest's shell to run a command typed into the
	// websocket (the guest may still be booting: retry), then time single keystrokes.
	c := dialConsole(t, wsURL, member)
	defer c.CloseNow()
	out := newWSConsoleReader(c)
	deadline := time.Now().Add(150 * time.Second)
	for !out.waitFor("vf-42-ok", 3*time.Second) {
		if err := out.err(); err != nil {
			t.Fatalf("console closed: %v; output:\n%s", err, out.text())
		}
		if time.Now().After(deadline) {
			t.Fatalf("the guest's shell did not answer within 150 s; console output:\n%s", out.text())
		}
		write(t, c, "echo vf-$((6*7))-ok\r")
	}
	var rtts []time.Duration
	for i := range 20 {
		ch := string(rune('a' + i))
		mark := out.len()
		start := time.Now()
		write(t, c, ch)
		if !out.waitForAfter(mark, ch, 5*time.Second) {
			t.Fatalf("no echo of %q within 5 s; output:\n%s", ch, out.text())
		}
		rtts = append(rtts, time.Since(start))
	}
	write(t, c, "\x15") // Ctrl-U: drop the typed line
	slices.Sort(rtts)
	t.Logf("keystroke round trip over websocket → server → agent → libvirt → guest (QEMU software emulation) and back: median %s, p90 %s, max %s (n=%d)",
		rtts[len(rtts)/2].Round(10*time.Microsecond), rtts[len(rtts)*9/10].Round(10*time.Microsecond), rtts[len(rtts)-1].Round(10*time.Microsecond), len(rtts))

	// The audit log names who opened the console, on which VM.
	rows, err := st.env.Client.AuditLog.Query().Where(auditlog.Action(console.AuditAction), auditlog.ObjectID(vmID)).All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Actor != "console-member" || rows[0].ObjectType != "VirtualMachine" {
		t.Fatalf("audit rows of the console: %+v, want one by console-member on the VirtualMachine", rows)
	}
}

// waitPlaced waits until the scheduler placed VM id on a node.
func waitPlaced(t *testing.T, c *ent.Client, id int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := c.VirtualMachine.GetX(gqltest.System(), id).QueryNode().Count(gqltest.System())
		if err == nil && n == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("VM %d not placed within 30 s (err %v)", id, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tenantToken makes a user holding role in tenant (or the platform when tenant is 0) and
// returns an API token of theirs.
func tenantToken(t *testing.T, c *ent.Client, tenant int, role authz.Role, username string) string {
	t.Helper()
	ctx := gqltest.System()
	uc := c.User.Create().SetUsername(username)
	if tenant != 0 {
		uc.AddTenantIDs(tenant)
	}
	u := uc.SaveX(ctx)
	b := c.RoleBinding.Create().SetUser(u).SetRole(rolebinding.Role(role.Enum())).SetDomain(authz.Platform)
	if tenant != 0 {
		b.SetTenantID(tenant).SetDomain(authz.TenantDomain(tenant))
	}
	b.SaveX(ctx)
	plain, hash, prefix := identity.NewToken(apitoken.KindApi)
	c.APIToken.Create().SetName(username).SetTokenHash(hash).SetPrefix(prefix).
		SetKind(apitoken.KindApi).SetScope(apitoken.ScopeReadWrite).SetOwnerID(u.ID).SaveX(ctx)
	return plain
}

// dialConsole opens a console websocket and authenticates like the dashboard: the token as
// the first message.
func dialConsole(t *testing.T, url, token string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s: %v (HTTP %d)", url, err, status)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("dial %s: HTTP %d", url, resp.StatusCode)
	}
	if err := c.Write(ctx, websocket.MessageText, []byte("Bearer "+token)); err != nil {
		t.Fatal(err)
	}
	return c
}

func write(t *testing.T, c *websocket.Conn, s string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageBinary, []byte(s)); err != nil {
		t.Fatalf("type %q: %v", s, err)
	}
}

// wsConsoleReader collects a console websocket's output.
type wsConsoleReader struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	readEr error
	more   chan struct{} // signalled on every message
}

func newWSConsoleReader(c *websocket.Conn) *wsConsoleReader {
	r := &wsConsoleReader{more: make(chan struct{}, 1)}
	go func() {
		for {
			_, msg, err := c.Read(context.Background())
			r.mu.Lock()
			if err != nil {
				r.readEr = err
			} else {
				r.buf.Write(msg)
			}
			r.mu.Unlock()
			select {
			case r.more <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	return r
}

func (r *wsConsoleReader) text() string { r.mu.Lock(); defer r.mu.Unlock(); return r.buf.String() }
func (r *wsConsoleReader) len() int     { r.mu.Lock(); defer r.mu.Unlock(); return r.buf.Len() }
func (r *wsConsoleReader) err() error   { r.mu.Lock(); defer r.mu.Unlock(); return r.readEr }

func (r *wsConsoleReader) waitFor(s string, d time.Duration) bool { return r.waitForAfter(0, s, d) }

// waitForAfter waits up to d for s in the output after its first mark bytes.
func (r *wsConsoleReader) waitForAfter(mark int, s string, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		r.mu.Lock()
		found := bytes.Contains(r.buf.Bytes()[mark:], []byte(s))
		failed := r.readEr != nil
		r.mu.Unlock()
		if found {
			return true
		}
		if failed {
			return false
		}
		select {
		case <-r.more:
		case <-t.C:
			return false
		}
	}
}

// bootShellGuest defines and starts domain name under qemu:///system: the host's kernel
// with the shell initramfs (guestimage.WriteShellInitramfs), a serial console on a
// pseudo-terminal like every VM's domain; it is destroyed and undefined at cleanup.
func bootShellGuest(t *testing.T, socket, name, kernel, busybox string) {
	t.Helper()
	c := libvirt.NewWithDialer(dialers.NewLocal(dialers.WithSocket(socket), dialers.WithLocalTimeout(10*time.Second)))
	if err := c.ConnectToURI(libvirt.QEMUSystem); err != nil {
		t.Skipf("libvirtd has no qemu driver: %v", err)
	}
	t.Cleanup(func() { _ = c.Disconnect() })
	initrd := filepath.Join(t.TempDir(), "shell.gz")
	f, err := os.Create(initrd)
	if err != nil {
		t.Fatal(err)
	}
	if err := guestimage.WriteShellInitramfs(f, busybox); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	zero := uint(0)
	d := libvirtxml.Domain{
		Type: hypervisor.DomainTypeQEMU, Name: name,
		Memory: &libvirtxml.DomainMemory{Value: 128, Unit: "MiB"},
		VCPU:   &libvirtxml.DomainVCPU{Value: 1},
		OS: &libvirtxml.DomainOS{
			Type:   &libvirtxml.DomainOSType{Arch: "x86_64", Machine: "pc", Type: "hvm"},
			Kernel: kernel, Initrd: initrd, Cmdline: "console=ttyS0 panic=-1 loglevel=1",
		},
		OnPoweroff: "destroy", OnReboot: "destroy", OnCrash: "destroy",
		Devices: &libvirtxml.DomainDeviceList{Serials: []libvirtxml.DomainSerial{{
			Source: &libvirtxml.DomainChardevSource{Pty: &libvirtxml.DomainChardevSourcePty{}},
			Target: &libvirtxml.DomainSerialTarget{Port: &zero},
		}}},
	}
	xml, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	dom, err := c.DomainDefineXMLFlags(xml, 0)
	if err != nil {
		t.Fatalf("define %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = c.DomainDestroy(dom)
		if err := c.DomainUndefineFlags(dom, 0); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("undefine %s: %v", name, err)
		}
	})
	if err := c.DomainCreate(dom); err != nil {
		t.Fatalf("start %s: %v", name, fmt.Errorf("%w (QEMU must run as root: user = \"root\" in /etc/libvirt/qemu.conf)", err))
	}
}

// libvirtSocket is libvirtd's socket (VIRTFLOW_TEST_LIBVIRT_SOCKET or the default); the test
// skips without one.
func libvirtSocket(t *testing.T) string {
	t.Helper()
	socket := os.Getenv("VIRTFLOW_TEST_LIBVIRT_SOCKET")
	if socket == "" {
		socket = hypervisor.DefaultSocket
	}
	if _, err := os.Stat(socket); err != nil {
		t.Skipf("no libvirtd: %s does not exist", socket)
	}
	return socket
}
