// Package topology holds the rules of the physical topology that ent hooks enforce on every
// write, whoever makes it: a device's rack units must fit in its rack and must not overlap
// another device on the same face, and a cable joins two different ports, each the end of at
// most one cable.
package topology
