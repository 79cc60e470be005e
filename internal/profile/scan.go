package profile

import (
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// MaxValue bounds what the scanner holds at once: a string is cut to its
// first MaxValue bytes (a trace's strings are kernel and event names), and
// a value kept whole (an event's extras) longer than that is an input
// error, so that a trace of any size is read in about bufSize plus
// MaxValue of memory.
const MaxValue = 1 << 20

// errTruncated is panicked by the scanner at an unexpected end of input.
var errTruncated = errors.New("unexpected end of input")

// syntaxPanic carries a syntax error through a panic inside the scanner.
type syntaxPanic struct {
	off int64
	msg string
}

// scanner is a byte-level JSON tokenizer over an io.Reader (or a fixed
// byte slice when r is nil). Errors are raised with panic and recovered
// at the API boundary (Decode), which keeps the hot paths short.
type scanner struct {
	r    io.Reader
	buf  []byte
	pos  int
	end  int
	base int64 // input offset of buf[0]
	mark int   // buf index to keep on refill, -1 for none
	eof  bool
	rerr error
	tmp  []byte // unescaped strings
}

func newScanner(r io.Reader, size int) *scanner {
	return &scanner{r: r, buf: make([]byte, size), mark: -1}
}

func bytesScanner(b []byte) *scanner {
	return &scanner{buf: b, end: len(b), mark: -1, eof: true}
}

func (s *scanner) offset() int64 { return s.base + int64(s.pos) }

func (s *scanner) fail(msg string) {
	panic(syntaxPanic{off: s.offset(), msg: msg})
}

// fill reads more input, keeping buf[min(mark,pos):]. It reports whether
// any byte was added.
func (s *scanner) fill() bool {
	if s.eof || s.r == nil {
		return false
	}
	keep := s.pos
	if s.mark >= 0 && s.mark < keep {
		keep = s.mark
	}
	if keep > 0 {
		n := copy(s.buf, s.buf[keep:s.end])
		s.base += int64(keep)
		s.pos -= keep
		s.end = n
		if s.mark >= 0 {
			s.mark -= keep
		}
	}
	if s.end == len(s.buf) {
		if s.end >= MaxValue {
			s.fail(fmt.Sprintf("a value longer than %d MiB (et reads none longer in a trace)", MaxValue>>20))
		}
		nb := make([]byte, min(2*len(s.buf), MaxValue))
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	for i := 0; i < 100; i++ {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.eof = true
			if err != io.EOF {
				s.rerr = err
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	s.eof = true
	s.rerr = io.ErrNoProgress
	return false
}

// ws skips white space and returns the next byte without consuming it;
// it panics with errTruncated at the end of input.
func (s *scanner) ws() byte {
	for {
		buf, pos := s.buf[:s.end], s.pos
		// Pretty-printed traces are about half indentation: skip runs of
		// eight spaces at a time.
		for pos+8 <= len(buf) && string(buf[pos:pos+8]) == "        " {
			pos += 8
		}
		for pos < len(buf) {
			c := buf[pos]
			if c > ' ' || (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
				s.pos = pos
				return c
			}
			pos++
		}
		s.pos = pos
		if !s.fill() {
			panic(errTruncated)
		}
	}
}

// wsEOF is ws that reports the end of input instead of panicking.
func (s *scanner) wsEOF() (byte, bool) {
	for {
		for s.pos < s.end {
			c := s.buf[s.pos]
			if c == ' ' || c == '\n' || c == '\r' || c == '\t' {
				s.pos++
				continue
			}
			return c, true
		}
		if !s.fill() {
			return 0, false
		}
	}
}

func (s *scanner) expect(c byte) {
	if s.ws() != c {
		s.fail("want " + quoteByte(c) + ", found " + quoteByte(s.buf[s.pos]))
	}
	s.pos++
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(rune(c)) + "'"
	}
	const hex = "0123456789abcdef"
	return "byte 0x" + string([]byte{hex[c>>4], hex[c&15]})
}

// next returns the next raw byte, consuming it.
func (s *scanner) next() byte {
	if s.pos >= s.end && !s.fill() {
		panic(errTruncated)
	}
	c := s.buf[s.pos]
	s.pos++
	return c
}

// str reads a JSON string (after white space) and returns its unescaped
// bytes, at most MaxValue of them (a longer string is cut there: a trace's
// strings are names). The result is valid until the next scanner call.
func (s *scanner) str() []byte {
	if s.ws() != '"' {
		s.fail("want a string, found " + quoteByte(s.buf[s.pos]))
	}
	s.pos++
	startAbs := s.base + int64(s.pos)
	if s.mark < 0 {
		// The mark protects the string from refills; it is released by
		// strDone. A panic leaves it set, which only keeps more input.
		s.mark = s.pos
		b := s.strBody(startAbs, true)
		s.mark = -1
		return b
	}
	return s.strBody(startAbs, false)
}

// strBody reads the rest of a string that started at startAbs. When own,
// the mark is the string's own (not a raw value's), and the string may be
// copied out and the mark released: what is held is then at most MaxValue.
func (s *scanner) strBody(startAbs int64, own bool) []byte {
	for {
		buf, pos := s.buf[:s.end], s.pos
		for pos < len(buf) {
			c := buf[pos]
			if c == '"' {
				start := int(startAbs - s.base)
				s.pos = pos + 1
				return s.buf[start:pos]
			}
			if c == '\\' {
				s.pos = pos
				start := int(startAbs - s.base)
				s.tmp = append(s.tmp[:0], s.buf[start:s.pos]...)
				if own {
					s.mark = -1
				}
				return s.strEscaped()
			}
			if c < 0x20 {
				s.pos = pos
				s.fail("control character in string")
			}
			pos++
		}
		s.pos = pos
		if start := int(startAbs - s.base); own && s.pos-start >= MaxValue {
			s.tmp = append(s.tmp[:0], s.buf[start:start+MaxValue]...)
			s.mark = -1
			s.pos = start + MaxValue
			return s.strEscaped()
		}
		if !s.fill() {
			panic(errTruncated)
		}
	}
}

// strEscaped reads the rest of a string into s.tmp, keeping at most
// MaxValue bytes of it.
func (s *scanner) strEscaped() []byte {
	for {
		c := s.next()
		switch {
		case c == '"':
			return s.tmp
		case c < 0x20:
			s.pos--
			s.fail("control character in string")
		case c != '\\':
			if len(s.tmp) < MaxValue {
				s.tmp = append(s.tmp, c)
			}
			continue
		}
		e := s.next()
		var b byte
		switch e {
		case '"', '\\', '/':
			b = e
		case 'b':
			b = '\b'
		case 'f':
			b = '\f'
		case 'n':
			b = '\n'
		case 'r':
			b = '\r'
		case 't':
			b = '\t'
		case 'u':
			r := s.hex4()
			if r >= 0xd800 && r < 0xdc00 {
				// Surrogate pair.
				if s.next() == '\\' && s.next() == 'u' {
					r2 := s.hex4()
					if r2 >= 0xdc00 && r2 < 0xe000 {
						r = (r-0xd800)<<10 + (r2 - 0xdc00) + 0x10000
					} else {
						r = utf8.RuneError
					}
				} else {
					s.pos--
					s.fail("invalid surrogate escape")
				}
			}
			if len(s.tmp) < MaxValue {
				s.tmp = utf8.AppendRune(s.tmp, r)
			}
			continue
		default:
			s.pos--
			s.fail("invalid escape " + quoteByte(e))
		}
		if len(s.tmp) < MaxValue {
			s.tmp = append(s.tmp, b)
		}
	}
}

func (s *scanner) hex4() rune {
	var r rune
	for i := 0; i < 4; i++ {
		c := s.next()
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			s.pos--
			s.fail("invalid \\u escape")
		}
	}
	return r
}

// number is a scanned JSON number.
type number struct {
	neg      bool
	mag      uint64
	integer  bool // no fraction or exponent
	overflow bool // magnitude above 2^64-1
}

// num reads a JSON number after white space.
func (s *scanner) num() number {
	c := s.ws()
	var n number
	n.integer = true
	if c == '-' {
		n.neg = true
		s.pos++
		c = s.next()
		s.pos--
	}
	if c < '0' || c > '9' {
		s.fail("want a number, found " + quoteByte(c))
	}
	lead0 := c == '0'
	digits := 0
	for {
		if s.pos >= s.end && !s.fill() {
			break
		}
		c = s.buf[s.pos]
		if c < '0' || c > '9' {
			break
		}
		d := uint64(c - '0')
		if n.mag > (1<<64-1-d)/10 {
			n.overflow = true
		} else {
			n.mag = n.mag*10 + d
		}
		digits++
		s.pos++
	}
	if lead0 && digits > 1 {
		s.fail("leading zero in number")
	}
	if s.pos < s.end || s.fill() {
		if s.buf[s.pos] == '.' {
			n.integer = false
			s.pos++
			s.digits()
		}
	}
	if s.pos < s.end || s.fill() {
		if c := s.buf[s.pos]; c == 'e' || c == 'E' {
			n.integer = false
			s.pos++
			if c := s.next(); c != '+' && c != '-' {
				s.pos--
			}
			s.digits()
		}
	}
	return n
}

func (s *scanner) digits() {
	c := s.next()
	if c < '0' || c > '9' {
		s.pos--
		s.fail("want a digit, found " + quoteByte(c))
	}
	for {
		if s.pos >= s.end && !s.fill() {
			return
		}
		if c := s.buf[s.pos]; c < '0' || c > '9' {
			return
		}
		s.pos++
	}
}

// lit consumes a literal (true, false, null) whose first byte is current.
func (s *scanner) lit(word string) {
	for i := 0; i < len(word); i++ {
		if s.next() != word[i] {
			s.pos--
			s.fail("invalid literal, want " + word)
		}
	}
}

// skip consumes one JSON value, checking its syntax.
func (s *scanner) skip(depth int) {
	if depth > 200 {
		s.fail("nesting too deep")
	}
	switch c := s.ws(); c {
	case '{':
		s.pos++
		if s.ws() == '}' {
			s.pos++
			return
		}
		for {
			s.str()
			s.expect(':')
			s.skip(depth + 1)
			c := s.ws()
			s.pos++
			if c == '}' {
				return
			}
			if c != ',' {
				s.pos--
				s.fail("want ',' or '}', found " + quoteByte(c))
			}
		}
	case '[':
		s.pos++
		if s.ws() == ']' {
			s.pos++
			return
		}
		for {
			s.skip(depth + 1)
			c := s.ws()
			s.pos++
			if c == ']' {
				return
			}
			if c != ',' {
				s.pos--
				s.fail("want ',' or ']', found " + quoteByte(c))
			}
		}
	case '"':
		s.str()
	case 't':
		s.lit("true")
	case 'f':
		s.lit("false")
	case 'n':
		s.lit("null")
	default:
		s.num()
	}
}

// raw consumes one value and returns its bytes (valid until the next
// scanner call).
func (s *scanner) raw() []byte {
	s.ws()
	old := s.mark
	startAbs := s.base + int64(s.pos)
	if old < 0 {
		s.mark = s.pos
	}
	s.skip(0)
	start := int(startAbs - s.base)
	s.mark = old
	return s.buf[start:s.pos]
}

// more is called after a member or element: it consumes ',' (true) or
// the closing byte (false).
func (s *scanner) more(close byte) bool {
	c := s.ws()
	s.pos++
	if c == ',' {
		return true
	}
	if c == close {
		return false
	}
	s.pos--
	s.fail("want ',' or " + quoteByte(close) + ", found " + quoteByte(c))
	return false
}

// objStart consumes '{' and reports whether the object has members.
func (s *scanner) objStart() bool {
	s.expect('{')
	if s.ws() == '}' {
		s.pos++
		return false
	}
	return true
}

// arrStart consumes '[' and reports whether the array has elements.
func (s *scanner) arrStart() bool {
	s.expect('[')
	if s.ws() == ']' {
		s.pos++
		return false
	}
	return true
}

// key reads a member name and the colon after it.
func (s *scanner) key() []byte {
	s.ws()
	old := s.mark
	startAbs := s.base + int64(s.pos) + 1
	if old < 0 {
		s.mark = s.pos
	}
	k := s.str()
	escaped := len(k) > 0 && cap(s.tmp) > 0 && &k[0] == &s.tmp[:1][0]
	n := len(k)
	if s.ws() != ':' {
		s.mark = old
		s.fail("want ':' after member name")
	}
	s.pos++
	if !escaped {
		start := int(startAbs - s.base)
		k = s.buf[start : start+n]
	}
	s.mark = old
	return k
}
