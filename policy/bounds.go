package policy

import (
	"fmt"
	"time"
)

// PoolCap is the most [pool].size or [pool].containers a policy gets
// without `git apex trust`; PoolMax the most it may name at all.
const (
	PoolCap = 64
	PoolMax = 1000
)

// Bounds are the limits a policy from a clone may lower but not lift on
// its own: how long an exchange may wait on a container and how much it
// may take in (above the defaults, a hanging container held a removal
// for weeks and a bundle filled the disk), and how many pool slots and
// warm containers it keeps (above PoolCap). It returns the lifted ones by
// key, as written, for the host settings; nil when none is.
func (p *Policy) Bounds() map[string]string {
	if p.lifted != nil {
		return p.lifted
	}
	def := Default().Container
	lifted := map[string]string{}
	if p.Container.ExchangeTimeout > def.ExchangeTimeout {
		lifted["container.exchange_timeout"] = time.Duration(p.Container.ExchangeTimeout).String()
	}
	if p.Container.MaxTransfer > def.MaxTransfer {
		lifted["container.max_transfer"] = fmt.Sprint(int64(p.Container.MaxTransfer))
	}
	if p.Pool.Size > PoolCap {
		lifted["pool.size"] = fmt.Sprint(p.Pool.Size)
	}
	if p.Pool.Containers > PoolCap {
		lifted["pool.containers"] = fmt.Sprint(p.Pool.Containers)
	}
	if len(lifted) == 0 {
		return nil // a policy that lifts nothing hashes as it did
	}
	return lifted
}

// KeepBounds puts the bounds the policy lifts back to their defaults (or
// PoolCap), for a policy not approved: Bounds still reports what it
// asked for, so that the approval covers it.
func (p *Policy) KeepBounds() {
	lifted := p.Bounds()
	if lifted == nil {
		return
	}
	def := Default().Container
	p.Container.ExchangeTimeout = min(p.Container.ExchangeTimeout, def.ExchangeTimeout)
	p.Container.MaxTransfer = min(p.Container.MaxTransfer, def.MaxTransfer)
	p.Pool.Size = min(p.Pool.Size, PoolCap)
	p.Pool.Containers = min(p.Pool.Containers, PoolCap)
	p.lifted = lifted
}
