package etrt

import (
	"fmt"
	"io"
)

// maxMessage bounds one gob message of the worker protocol: the largest
// request or response carries chunkBytes of data (a write, a read
// answer), plus a little for the other fields. gob itself accepts
// messages of up to 1 GiB, and allocates the buffer a message's length
// prefix announces before it reads it.
var maxMessage = uint64(chunkBytes) + 1<<20

// frameReader passes a gob stream through, checking each message's
// length prefix first, so that a corrupt or hostile stream fails with an
// error instead of making the reader allocate up to gob's 1 GiB limit.
// (A gob stream is a sequence of messages, each an unsigned count of the
// bytes that follow, then those bytes; the count is one byte below 128,
// else a byte holding minus the number of big-endian bytes that follow.)
type frameReader struct {
	r    io.Reader
	left uint64 // bytes of the current message still to pass
	head [9]byte
	hn   int // bytes of head still to hand out
	hoff int
}

func newFrameReader(r io.Reader) *frameReader { return &frameReader{r: r} }

func (f *frameReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if f.hn > 0 {
		n := copy(p, f.head[f.hoff:f.hoff+f.hn])
		f.hoff += n
		f.hn -= n
		return n, nil
	}
	if f.left == 0 {
		if err := f.nextHeader(); err != nil {
			return 0, err
		}
		return f.Read(p)
	}
	if uint64(len(p)) > f.left {
		p = p[:f.left]
	}
	n, err := f.r.Read(p)
	f.left -= uint64(n)
	if err == io.EOF && f.left > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// nextHeader reads the next message's count, checks it and queues its
// bytes to be handed out before the message.
func (f *frameReader) nextHeader() error {
	if _, err := io.ReadFull(f.r, f.head[:1]); err != nil {
		return err // io.EOF between messages: the stream ended cleanly
	}
	b := f.head[0]
	n, size := uint64(b), 1
	if b >= 0x80 {
		k := int(-int8(b))
		if k < 1 || k > 8 {
			return fmt.Errorf("gob message count: bad length byte %#x", b)
		}
		if _, err := io.ReadFull(f.r, f.head[1:1+k]); err != nil {
			return fmt.Errorf("gob message count: %w", noEOF(err))
		}
		n = 0
		for _, c := range f.head[1 : 1+k] {
			n = n<<8 | uint64(c)
		}
		size = 1 + k
	}
	if n > maxMessage {
		return fmt.Errorf("gob message of %d bytes is over the protocol's %d", n, maxMessage)
	}
	f.left, f.hoff, f.hn = n, 0, size
	return nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
