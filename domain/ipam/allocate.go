package ipam

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/netip"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/ipaddress"
	"github.com/virtflow/virtflow/ent/loadbalancer"
	"github.com/virtflow/virtflow/ent/network"
	"github.com/virtflow/virtflow/ent/port"
	"github.com/virtflow/virtflow/store/dbtx"
	"github.com/virtflow/virtflow/store/rowlock"
)

// MaxAttempts bounds how many times Allocate picks the next free address of a network when
// the one it picked was taken between reading and inserting. Writes of addresses inside a
// transaction lock the network as Allocate does (AddressHook), so a retry means a writer
// outside any transaction, which holds no lock, took the address; more than a few in a row
// means something keeps writing into the network, and the caller gets CONFLICT on networkID
// to try again later.
const MaxAttempts = 8

// Request asks Allocate for one address. Its fields are those of the GraphQL
// AllocateIPAddressInput, in the same order, so the resolver converts one into the other.
type Request struct {
	// NetworkID is the network to allocate in. Required.
	NetworkID int
	// Address is the address wanted; nil means the lowest free one.
	Address *string
	// Status is ALLOCATED (also when nil) or RESERVED.
	Status *ipaddress.Status
	// PortID, when set, binds the address to that port.
	PortID *int
	// LoadBalancerID, when set, makes the address that load balancer's VIP. The load balancer
	// must not have a VIP yet.
	LoadBalancerID *int
	// DNSName and Description, when set, are stored with the address.
	DNSName, Description *string
}

// Allocate records an address of a network and returns it: req.Address when given, otherwise
// the lowest free host address — skipping the network and broadcast addresses, the gateway,
// the reserved ranges and every address already recorded.
//
// Concurrent allocations never return the same address, also across server replicas, because
// the database decides: Allocate locks the network's row (SELECT … FOR UPDATE on PostgreSQL;
// SQLite runs one writer at a time) for the rest of the transaction, so allocations in one
// network take turns between reading what is used and inserting (so do createIPAddress and
// updateIPAddress, see AddressHook); the unique index on (network, address) is the backstop
// against writers that hold no lock: the insert is ON CONFLICT DO NOTHING, and when it inserts
// nothing Allocate reads again and takes the next free address, at most MaxAttempts times. Reading what is used is two queries
// and a walk over the used addresses and ranges, never over the prefix.
//
// It runs in the caller's transaction when there is one (see dbtx.Run; the network stays locked
// until that transaction ends) and in its own otherwise.
//
// Decisions:
//   - A specific address must be a usable host address of the prefix (VALIDATION on
//     address), not the gateway (VALIDATION), and not inside a reserved range (VALIDATION
//     naming the range), whatever the status asked for: reserved ranges are space the
//     allocator keeps away from — a DHCP pool, appliances. An operator who must record an
//     address inside one does it with createIPAddress, which only checks the prefix.
//   - A taken address is CONFLICT on address; a full network is RESOURCE_EXHAUSTED on
//     networkID.
//   - A network, port or load balancer that does not exist, or that the viewer may not see,
//     is VALIDATION on networkID, portID or loadBalancerID: the same answer createIPAddress
//     gives for a dangling reference (dberr.Classify maps foreign-key violations that way).
//   - A load balancer that already has a VIP is CONFLICT on loadBalancerID; its row is locked
//     too, so two allocations cannot both become its VIP.
//   - Whether the viewer may write the address is ent privacy's decision at the insert.
func Allocate(ctx context.Context, client *ent.Client, req Request) (*ent.IPAddress, error) {
	return allocator{lock: true, attempts: MaxAttempts}.allocate(ctx, client, req)
}

// allocator is Allocate with its knobs, which only tests turn: lock (off shows what the lock
// is for) and attempts; retried, when set, is called before every retry, and beforeInsert
// between reading what is used and inserting.
type allocator struct {
	lock         bool
	attempts     int
	retried      func()
	beforeInsert func()
}

func (a allocator) allocate(ctx context.Context, client *ent.Client, req Request) (*ent.IPAddress, error) {
	status := ipaddress.StatusAllocated
	if req.Status != nil {
		status = *req.Status
	}
	if err := ipaddress.StatusValidator(status); err != nil {
		return nil, apierr.Validation("status", "%v", err)
	}
	var want netip.Addr
	if req.Address != nil {
		var err error
		if want, err = netip.ParseAddr(*req.Address); err != nil {
			return nil, apierr.Validation("address", "%q is not an IP address", *req.Address)
		}
	}
	var out *ent.IPAddress
	_, err := dbtx.Run(ctx, client, func(c *ent.Client) error {
		ctx := ctx
		if err := checkPort(ctx, c, req.PortID); err != nil { // before the lock: it needs none
			return err
		}
		n, err := a.network(ctx, c, req.NetworkID)
		if err != nil {
			return err
		}
		if a.lock {
			ctx = withLocked(ctx, n) // AddressHook need not lock it again
		}
		if err := a.checkLoadBalancer(ctx, c, req.LoadBalancerID); err != nil {
			return err
		}
		if want.IsValid() {
			out, err = specific(ctx, c, n, want, status, req)
		} else {
			out, err = a.next(ctx, c, n, status, req)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// network reads network id, locked for the rest of the transaction when a.lock is set.
func (a allocator) network(ctx context.Context, c *ent.Client, id int) (*ent.Network, error) {
	q := c.Network.Query().Where(network.ID(id))
	var (
		n   *ent.Network
		err error
	)
	if a.lock {
		n, err = q.Modify(rowlock.ForUpdate).Only(ctx)
	} else {
		n, err = q.Only(ctx)
	}
	if ent.IsNotFound(err) {
		return nil, apierr.Validation("networkID", "network %d does not exist", id)
	}
	if err != nil {
		return nil, fmt.Errorf("read network %d: %w", id, err)
	}
	return n, nil
}

// specific records want in n after checking it may be handed out.
func specific(ctx context.Context, c *ent.Client, n *ent.Network, want netip.Addr, status ipaddress.Status, req Request) (*ent.IPAddress, error) {
	prefix, gateway, err := parseNetwork(n)
	if err != nil {
		return nil, err
	}
	if want.BitLen() != prefix.Addr().BitLen() {
		return nil, apierr.Validation("address", "%s is not of the address family of network %s (%s)", want, n.Name, prefix)
	}
	if err := Usable(prefix, want); err != nil {
		return nil, apierr.Validation("address", "%v", err)
	}
	if want == gateway {
		return nil, apierr.Validation("address", "%s is the gateway of network %s", want, n.Name)
	}
	ranges, err := loadRanges(ctx, c, n.ID, 0)
	if err != nil {
		return nil, err
	}
	if r, ok := newSpace(prefix, gateway, nil, ranges).reservedRange(want); ok {
		return nil, apierr.Validation("address", "%s is inside the reserved range %s of network %s", want, r, n.Name)
	}
	ip, err := insert(ctx, c, n, want, status, req)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &apierr.Error{Code: apierr.CodeConflict, Field: "address",
			Message: fmt.Sprintf("%s is already in use in network %s", want, n.Name)}
	}
	return ip, err
}

// next records the lowest free address of n.
func (a allocator) next(ctx context.Context, c *ent.Client, n *ent.Network, status ipaddress.Status, req Request) (*ent.IPAddress, error) {
	for attempt := range a.attempts {
		if attempt > 0 && a.retried != nil {
			a.retried()
		}
		s, err := loadSpace(ctx, c, n, false)
		if err != nil {
			return nil, err
		}
		addr, ok := s.next()
		if !ok {
			return nil, apierr.Exhausted("networkID", "network %s (%s) has no free address", n.Name, n.Cidr)
		}
		if a.beforeInsert != nil {
			a.beforeInsert()
		}
		ip, err := insert(ctx, c, n, addr, status, req)
		if errors.Is(err, sql.ErrNoRows) {
			continue // taken since we read: read again
		}
		return ip, err
	}
	return nil, &apierr.Error{Code: apierr.CodeConflict, Field: "networkID",
		Message: fmt.Sprintf("network %s: the next free address was taken %d times in a row by concurrent writers; try again", n.Name, a.attempts)}
}

// insert records addr in n. When the address is already
// recorded it inserts nothing and returns sql.ErrNoRows (ON CONFLICT DO NOTHING), which,
// unlike a unique violation, leaves a PostgreSQL transaction usable.
func insert(ctx context.Context, c *ent.Client, n *ent.Network, addr netip.Addr, status ipaddress.Status, req Request) (*ent.IPAddress, error) {
	create := c.IPAddress.Create().
		SetNetworkID(n.ID).
		SetAddress(addr.String()).
		SetStatus(status).
		SetNillablePortID(req.PortID).
		SetNillableLoadBalancerID(req.LoadBalancerID).
		SetNillableDNSName(req.DNSName).
		SetNillableDescription(req.Description)
	create.OnConflictColumns(ipaddress.FieldAddress, ipaddress.NetworkColumn).DoNothing()
	return create.Save(ctx)
}

// checkPort makes sure port id, when given, exists and the viewer may see it.
func checkPort(ctx context.Context, c *ent.Client, id *int) error {
	if id == nil {
		return nil
	}
	ok, err := c.Port.Query().Where(port.ID(*id)).Exist(ctx)
	if err != nil {
		return fmt.Errorf("read port %d: %w", *id, err)
	}
	if !ok {
		return apierr.Validation("portID", "port %d does not exist", *id)
	}
	return nil
}

// checkLoadBalancer makes sure load balancer id, when given, exists, the viewer may see it
// and it has no VIP yet; its row stays locked (with a.lock) so no concurrent allocation gives
// it a VIP as well. The unique foreign key of the VIP is the backstop.
func (a allocator) checkLoadBalancer(ctx context.Context, c *ent.Client, id *int) error {
	if id == nil {
		return nil
	}
	q := c.LoadBalancer.Query().Where(loadbalancer.ID(*id))
	var (
		lb  *ent.LoadBalancer
		err error
	)
	if a.lock {
		lb, err = q.Modify(rowlock.ForUpdate).Only(ctx)
	} else {
		lb, err = q.Only(ctx)
	}
	if ent.IsNotFound(err) {
		return apierr.Validation("loadBalancerID", "load balancer %d does not exist", *id)
	}
	if err != nil {
		return fmt.Errorf("read load balancer %d: %w", *id, err)
	}
	vip, err := c.IPAddress.Query().Where(ipaddress.HasLoadBalancerWith(loadbalancer.ID(lb.ID))).
		Select(ipaddress.FieldAddress).Only(authz.Unrestricted(ctx))
	switch {
	case err == nil:
		return &apierr.Error{Code: apierr.CodeConflict, Field: "loadBalancerID",
			Message: fmt.Sprintf("load balancer %s already has the VIP %s", lb.Name, vip.Address)}
	case ent.IsNotFound(err):
		return nil
	default:
		return fmt.Errorf("read the VIP of load balancer %s: %w", lb.Name, err)
	}
}
