// Package traffic is the API side of the traffic path (issue 27): which nodes serve a load
// balancer, which replicas are its members, what its nodes report, and when a load balancer
// or a global service may say ACTIVE.
//
//   - ChooseNodes asks the scheduler (package scheduler, through placement's snapshot of
//     the region) for NodesPerLB nodes under a RACK anti-affinity rule, so a load
//     balancer's nodes sit in different racks where the region has several (partial
//     placement: one rack gives one node).
//   - Members are the addresses of the region service's replicas (their ports' IP
//     addresses); a member keeps the health last reported while its address stays.
//   - ApplyNodeReport records what one serving node's agent observed (lbnet.State: VIP
//     announced, proxy forwarding, member health).
//   - A load balancer is ACTIVE only while at least one of its nodes reported, within
//     Config.Stale, that it announces the VIP and forwards; otherwise NOT_REALIZED with the
//     reason. Nothing is assumed: without reports it stays NOT_REALIZED.
//   - A global service in GSLB mode is served by gslb.Publisher (PowerDNS): its FQDN answers
//     with the VIPs of the members whose load balancer is ACTIVE and whose VIP accepts a
//     connection; ACTIVE while that answer is not empty, NOT_SERVED otherwise.
//   - In ANYCAST mode the members' load balancers all serve one VIP, the first member's
//     (AnycastVIP): ForNode hands it to every member's nodes instead of their own VIP, so it
//     is announced from every region's load-balancer nodes. The service is ACTIVE while at
//     least one member forwards. A member detached serves its own VIP again: its nodes
//     withdraw the shared one and the traffic moves to the other regions.
//
// Loop.Once does all of it for every load balancer and global service; the worker runs it
// periodically (Loop.Run).
package traffic
