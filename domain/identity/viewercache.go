package identity

import (
	"sync"
	"time"
)

// DefaultViewerCacheTTL is how long a ViewerCache keeps a token when its TTL is zero.
const DefaultViewerCacheTTL = 10 * time.Second

// defaultViewerCacheSize bounds a ViewerCache whose MaxEntries is zero.
const defaultViewerCacheSize = 10_000

// ViewerCache keeps, for a few seconds, what Authenticate read of a token (the token, its
// owner and everything the owner holds), so that a request does not read the database to
// authenticate. What can change between two requests is still checked on every one: the
// token's expiry against the clock and its allowed networks against the source address.
//
// What the database says can change is announced by Credentials events (package
// livestatus publishes one per user concerned when a token, role binding, user, maintainer
// or maintainer group changes, through Redis to every replica). ForgetUser drops that
// user's tokens at once, so a revocation or a role change applies to the next request on
// every replica, not after the TTL. The cache serves nothing until the process's event
// subscription is confirmed (SubscriptionChanged(true)), and is emptied and turned off
// whenever it is lost: events missed while it was down cannot leave a stale entry. An
// entry read before an event but stored after it is not stored (generations).
//
// The zero value is ready to use (and off until SubscriptionChanged(true)); it is safe for
// concurrent use.
type ViewerCache struct {
	// TTL bounds how long an entry is served (DefaultViewerCacheTTL when zero): a backstop
	// should an event be lost in a way the subscription did not notice.
	TTL time.Duration
	// MaxEntries bounds the tokens kept; past it, the cache is emptied (10,000 when zero).
	MaxEntries int

	mu      sync.Mutex
	live    bool
	gen     uint64 // moves with every invalidation
	entries map[string]cachedToken
}

// cachedToken is a token as lookupToken read it, its grants decoded, and when.
type cachedToken struct {
	row    tokenRow
	grants []grantRow
	read   time.Time
}

// generation returns the current generation: an entry read now may be stored with it.
func (c *ViewerCache) generation() uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// get returns the entry of hash when it is younger than the TTL at now.
func (c *ViewerCache) get(hash string, now time.Time) (cachedToken, bool) {
	if c == nil {
		return cachedToken{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[hash]
	if !ok || !c.live {
		return cachedToken{}, false
	}
	ttl := c.TTL
	if ttl <= 0 {
		ttl = DefaultViewerCacheTTL
	}
	if now.Sub(e.read) >= ttl || now.Before(e.read) {
		delete(c.entries, hash)
		return cachedToken{}, false
	}
	return e, true
}

// put stores e for hash, unless the cache is off or was invalidated since generation gen
// (the entry may predate the change).
func (c *ViewerCache) put(hash string, gen uint64, e cachedToken) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live || c.gen != gen {
		return
	}
	max := c.MaxEntries
	if max <= 0 {
		max = defaultViewerCacheSize
	}
	if c.entries == nil || len(c.entries) >= max {
		c.entries = make(map[string]cachedToken)
	}
	c.entries[hash] = e
}

// touched records that the token of hash was last used at, so that the entry does not
// ask for another write of last_used_at within LastUsedGranularity.
func (c *ViewerCache) touched(hash string, at time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[hash]; ok {
		e.row.LastUsedAt = &at
		c.entries[hash] = e
	}
}

// ForgetUser drops the tokens of user: what they grant may have changed.
func (c *ViewerCache) ForgetUser(user int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for hash, e := range c.entries {
		if e.row.OwnerID == nil || *e.row.OwnerID == user {
			delete(c.entries, hash)
		}
	}
}

// SubscriptionChanged empties the cache and turns it on (live) or off: the subscription to
// Credentials events was confirmed, or lost.
func (c *ViewerCache) SubscriptionChanged(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.live = live
	clear(c.entries)
}

// Len is the number of tokens kept.
func (c *ViewerCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
