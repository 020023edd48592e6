// Package nodestatus records what a node agent reports about its node: the heartbeat of
// reportNodeStatus (capacity, agent version, health) and the cordon a node may ask for.
//
// It only writes heartbeats. Deciding that a node has gone quiet (NOT_READY after 50 s, DOWN
// after 5 minutes) is the node monitor's job, in the worker.
//
// Authorization is the ent privacy policy's: the agent of node N may update node N only (an
// agent of another node does not even see it, so it gets NOT_FOUND), admins may update any
// node, and tenant members may not read nodes at all (FORBIDDEN).
package nodestatus
