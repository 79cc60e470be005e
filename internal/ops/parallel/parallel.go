package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Workers is the number of goroutines the reference math uses:
// runtime.GOMAXPROCS(0).
func Workers() int { return runtime.GOMAXPROCS(0) }

// For splits [0, n) into chunks of at least grain items and calls
// fn(lo, hi) for each chunk, on up to Workers() goroutines, returning when
// all have finished. Chunks are handed out dynamically, so uneven work
// balances; with one worker, or n <= grain, fn runs on the caller's
// goroutine. fn must be safe to call concurrently on disjoint ranges.
//
// The helpers are a pool of goroutines that, after a job, spin for
// poolSpin before they sleep, as ggml's CPU threads do: an op of a few
// microseconds then runs on all workers at once instead of waiting out
// the scheduler's wake-up of a new goroutine (which left the caller doing
// most of the chunks alone). One For at a time uses the pool;
// another at the same time (nested in fn, or on another goroutine) starts
// goroutines of its own.
func For(n, grain int, fn func(lo, hi int)) {
	w, grain := workers(n, grain, fn)
	if w == 0 {
		return
	}
	// About 4 chunks per worker, never smaller than grain.
	chunk := max(grain, (n+4*w-1)/(4*w))
	nchunks := (n + chunk - 1) / chunk
	w = min(w, nchunks)
	start(&pfJob{fn: fn, n: int64(n), chunk: int64(chunk)}, w)
}

// Split is For with each worker's share of [0, n) the same from one call
// to the next, as ggml's threads split an op's rows: w = min(Workers(),
// ⌈n/grain⌉) parts of ⌈n/w⌉ items, part 0 on the caller and part k on
// the pool's k-th helper, so that an op run again and again finds the
// rows it wrote in the cache of the core that wrote them (For's chunks go
// to whichever worker claims them first: at ADD n = 32, 512 KB a
// source, that moved the rows between the cores' caches at every call).
// A worker done with its part runs the parts no one has started, so a
// helper late to wake costs at most what running them on the caller
// does.
func Split(n, grain int, fn func(lo, hi int)) {
	w, grain := workers(n, grain, fn)
	if w == 0 {
		return
	}
	w = min(w, (n+grain-1)/grain)
	chunk := (n + w - 1) / w
	w = (n + chunk - 1) / chunk // no empty part
	start(&pfJob{fn: fn, n: int64(n), chunk: int64(chunk), owned: make([]atomic.Bool, w)}, w)
}

// workers is For's and Split's start: the workers they may use and the
// grain (at least 1), or 0 when the call is done, because n ≤ 0 or fn
// ran all of [0, n) on the caller (one worker, or n ≤ grain).
func workers(n, grain int, fn func(lo, hi int)) (int, int) {
	if n <= 0 {
		return 0, grain
	}
	grain = max(grain, 1)
	w := Workers()
	if w <= 1 || n <= grain {
		fn(0, n)
		return 0, grain
	}
	return w, grain
}

// start runs j on the caller (worker 0) and w-1 helpers: the pool's, or
// goroutines of its own while another job has the pool.
func start(j *pfJob, w int) {
	if pool.mu.TryLock() {
		pool.run(j, w-1)
		pool.mu.Unlock()
		return
	}
	var wg sync.WaitGroup
	wg.Add(w - 1)
	for i := 1; i < w; i++ {
		go func() {
			defer wg.Done()
			j.work(i)
		}()
	}
	j.work(0)
	wg.Wait()
}

// pfJob is one For or Split: For's chunks are claimed by adding chunk
// to next, Split's by setting their flag in owned; done counts the items
// finished.
type pfJob struct {
	fn       func(lo, hi int)
	n, chunk int64
	next     atomic.Int64
	done     atomic.Int64
	owned    []atomic.Bool
}

// work runs chunks of j until none is left, as worker id (0 the caller,
// k > 0 the pool's k-th helper): Split's chunk id first, then every chunk
// after it that no worker has claimed (a helper numbered past the parts
// runs none).
func (j *pfJob) work(id int) {
	if k := len(j.owned); k > 0 {
		if id >= k {
			return // the parts stay with their workers
		}
		for i := range k {
			c := (id + i) % k
			if j.owned[c].Load() || !j.owned[c].CompareAndSwap(false, true) {
				continue
			}
			lo := int64(c) * j.chunk
			hi := min(j.n, lo+j.chunk)
			j.fn(int(lo), int(hi))
			j.done.Add(hi - lo)
		}
		return
	}
	for {
		lo := j.next.Add(j.chunk) - j.chunk
		if lo >= j.n {
			return
		}
		hi := min(j.n, lo+j.chunk)
		j.fn(int(lo), int(hi))
		j.done.Add(hi - lo)
	}
}

// poolSpin is how long a pool helper polls for the next job after one
// before it sleeps: longer than the gap between the ops of a graph or of
// a perf loop (a microsecond or two), short enough that polling helpers
// do not take the CPU from other processes for long. At 200 µs the
// fuzzers' two worker processes lost 40% of their execs to each other's
// helpers (FuzzCatalog 1.09M execs a minute, 1.72M at 20 µs); the perf
// rounds ran the same at both.
const poolSpin = 20 * time.Microsecond

// workerPool holds the helpers of For. job and gen publish a job:
// a helper that sees gen change takes the job (a helper that comes late
// finds its chunks gone, or works on whatever job is current: every job
// is complete only when its done count says so). sleepers counts helpers
// in cond.Wait or about to be; they are woken by Broadcast under smu.
type workerPool struct {
	mu       sync.Mutex // held by the For using the pool
	helpers  int        // started so far (only under mu)
	job      atomic.Pointer[pfJob]
	gen      atomic.Uint64
	sleepers atomic.Int32
	smu      sync.Mutex
	cond     *sync.Cond
}

var pool = func() *workerPool {
	p := &workerPool{}
	p.cond = sync.NewCond(&p.smu)
	return p
}()

// run runs j on the caller and up to want helpers, starting helpers that
// do not exist yet, and returns when all of j is done. p.mu is held.
func (p *workerPool) run(j *pfJob, want int) {
	for p.helpers < want {
		p.helpers++
		go p.helper(p.helpers)
	}
	p.job.Store(j)
	p.gen.Add(1)
	if p.sleepers.Load() > 0 {
		p.smu.Lock()
		p.cond.Broadcast()
		p.smu.Unlock()
	}
	j.work(0)
	for spins := 0; j.done.Load() < j.n; spins++ {
		if spins > 64 {
			runtime.Gosched() // a helper holding a chunk may need this P
		}
	}
	p.job.CompareAndSwap(j, nil)
}

// helper takes every job the pool publishes, as worker id (numbered from
// 1 in the order the helpers start), spinning between jobs for poolSpin,
// then sleeping until the next.
func (p *workerPool) helper(id int) {
	var seen uint64
	for {
		g := p.gen.Load()
		if g == seen {
			deadline := time.Now().Add(poolSpin)
			for spins := 0; ; spins++ {
				if g = p.gen.Load(); g != seen {
					break
				}
				if spins&1023 == 1023 && time.Now().After(deadline) {
					g = p.sleep(seen)
					break
				}
			}
		}
		seen = g
		if j := p.job.Load(); j != nil {
			j.work(id)
		}
	}
}

// sleep waits until gen moves past seen and returns it. The helper counts
// itself a sleeper before it reads gen, so run, which moves gen before
// it reads sleepers, either sees the sleeper and wakes it or is seen.
func (p *workerPool) sleep(seen uint64) uint64 {
	p.smu.Lock()
	defer p.smu.Unlock()
	p.sleepers.Add(1)
	defer p.sleepers.Add(-1)
	for {
		if g := p.gen.Load(); g != seen {
			return g
		}
		p.cond.Wait()
	}
}
