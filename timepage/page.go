package timepage

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Page is the memory a Publisher writes and a Reader reads: PageSize bytes
// accessed as aligned 64-bit words with atomic loads and stores, so that a
// writer and readers in other processes (or goroutines) never race in the
// Go memory model's sense and the seqlock's ordering holds.
type Page interface {
	// Load64 atomically loads the little-endian uint64 at byte offset
	// off (a multiple of 8 below PageSize).
	Load64(off int) uint64
	// Store64 atomically stores v at byte offset off.
	Store64(off int, v uint64)
}

// wordPage is a Page whose words a Reader may load directly (inlined
// atomic loads instead of a method call per word): VirtualPage and
// FilePage.
type wordPage interface {
	Page
	words64() *[PageSize / 8]uint64
}

// VirtualPage is a Page in ordinary memory: what the simulator publishes
// to. It reads no clock and starts no goroutine; the same Publish calls
// give the same bytes.
type VirtualPage struct {
	words [PageSize / 8]uint64
}

// NewVirtualPage returns a zeroed page (a Reader on it answers ErrNoModel
// until a Publisher has written it).
func NewVirtualPage() *VirtualPage { return &VirtualPage{} }

// words64 gives Readers direct access to the page's words (see wordPage).
func (p *VirtualPage) words64() *[PageSize / 8]uint64 { return &p.words }

// Load64 implements Page.
func (p *VirtualPage) Load64(off int) uint64 { return atomic.LoadUint64(&p.words[off/8]) }

// Store64 implements Page.
func (p *VirtualPage) Store64(off int, v uint64) { atomic.StoreUint64(&p.words[off/8], v) }

// Bytes returns a copy of the page as the bytes a file would hold.
func (p *VirtualPage) Bytes() []byte {
	b := make([]byte, PageSize)
	for i := range p.words {
		v := p.Load64(i * 8)
		for k := range 8 {
			b[i*8+k] = byte(v >> (8 * k))
		}
	}
	return b
}

// FilePage is a Page backed by a file mapped with mmap(MAP_SHARED): on a
// real node, /dev/shm/chronosync-<cluster>-node<N> (see Path).
type FilePage struct {
	path string
	mem  []byte
}

// Path is the conventional file of node's page in cluster:
// /dev/shm/chronosync-<cluster>-node<node>.
func Path(cluster string, node int) string {
	return fmt.Sprintf("/dev/shm/chronosync-%s-node%d", cluster, node)
}

// FileMode is the mode CreateFile gives the page: read-write for its owner,
// readable by the owner's group (tracers run in that group), nothing for
// others.
const FileMode = 0o640

// CreateFile opens the page file at path for writing, creating it with
// FileMode (set with fchmod, so the umask does not narrow it) and sizing it
// to PageSize. An existing page is kept as it is, so that readers which
// have it mapped keep reading the last model (stale after its deadline)
// until the new publisher's first Publish; NewPublisher rewrites a header
// that is not this version's.
func CreateFile(path string) (*FilePage, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, FileMode)
	if err != nil {
		return nil, fmt.Errorf("timepage: create %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Chmod(FileMode); err != nil {
		return nil, fmt.Errorf("timepage: %s: chmod %o: %w", path, FileMode, err)
	}
	if err := f.Truncate(PageSize); err != nil {
		return nil, fmt.Errorf("timepage: %s: size it to %d bytes: %w", path, PageSize, err)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, PageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("timepage: %s: mmap %d bytes read-write: %w", path, PageSize, err)
	}
	return &FilePage{path: path, mem: mem}, nil
}

// OpenFile maps the page file at path read-only, for a Reader. The file
// must be at least PageSize bytes.
func OpenFile(path string) (*FilePage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("timepage: open %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("timepage: %s: stat: %w", path, err)
	}
	if st.Size() < PageSize {
		return nil, fmt.Errorf("timepage: %s: %d bytes, expected at least %d: %w", path, st.Size(), PageSize, ErrLayout)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, PageSize, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("timepage: %s: mmap %d bytes read-only: %w", path, PageSize, err)
	}
	return &FilePage{path: path, mem: mem}, nil
}

// Path returns the file the page maps.
func (p *FilePage) Path() string { return p.path }

func (p *FilePage) word(off int) *uint64 {
	return (*uint64)(unsafe.Pointer(&p.mem[off])) // mmap memory is page-aligned; off is a multiple of 8
}

// words64 gives Readers direct access to the mapped words (see wordPage).
// Using it after Close faults: a Reader must not outlive its page.
func (p *FilePage) words64() *[PageSize / 8]uint64 {
	return (*[PageSize / 8]uint64)(unsafe.Pointer(&p.mem[0]))
}

// Load64 implements Page.
func (p *FilePage) Load64(off int) uint64 { return atomic.LoadUint64(p.word(off)) }

// Store64 implements Page. It faults on a page opened with OpenFile.
func (p *FilePage) Store64(off int, v uint64) { atomic.StoreUint64(p.word(off), v) }

// Close unmaps the page. The file stays: readers keep their mappings, and
// the model in it turns stale at its deadline. Remove it with os.Remove
// when the node is retired.
func (p *FilePage) Close() error {
	if p.mem == nil {
		return nil
	}
	err := unix.Munmap(p.mem)
	p.mem = nil
	if err != nil {
		return fmt.Errorf("timepage: %s: munmap: %w", p.path, err)
	}
	return nil
}

// Errors a Reader returns; test them with errors.Is.
var (
	// ErrNoModel: the page was never published to.
	ErrNoModel = errors.New("timepage: no model published yet")
	// ErrStale: the reading is past the model's deadline (no round within
	// it). The values returned with it are the last model's extrapolation.
	ErrStale = errors.New("timepage: model is stale")
	// ErrFailed: the node published StatusFailed. The values returned with
	// it are the last model's.
	ErrFailed = errors.New("timepage: node reports its model failed")
	// ErrTorn: no consistent copy of the model after MaxRetries tries.
	ErrTorn = errors.New("timepage: torn reads on every try")
	// ErrLayout: the page is not a version-1 chronosync time page.
	ErrLayout = errors.New("timepage: not a chronosync time page of this version")
)
