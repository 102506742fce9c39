package resultcache

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Result is a cached answer to a question: the SQL that answered it and the
// rows it returned, with what is needed to re-check that a later asker may
// see them.
type Result struct {
	// SQL is the validated statement that produced the rows.
	SQL string
	// Tables are the tables the retriever chose (schema.table), shown to the
	// client in a notice.
	Tables []string
	// Relations are the relations the SQL reads, as quoted qualified names,
	// whose SELECT privilege is re-checked before the rows are served.
	Relations []string
	// Fields is the row description.
	Fields []pgproto3.FieldDescription
	// Rows are the rows in text format; a nil value is SQL NULL.
	Rows [][][]byte
	// Truncated says the rows were cut at the row limit.
	Truncated bool
	// CommandTag is the tag the execution ended with, e.g. "SELECT 3".
	CommandTag string
}

// SQLEntry is the second, longer-lived tier: the validated SQL of a question
// without its rows, so a repeat after the result expired runs again without
// asking the LLM.
type SQLEntry struct {
	SQL       string
	Tables    []string
	Relations []string
}

// errCorrupt marks a cached value that does not decode; the cache treats it
// as a miss.
var errCorrupt = errors.New("resultcache: corrupt cache entry")

const (
	formatResult byte = 1
	formatSQL    byte = 2
)

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
}

// encodeResult serialises r. Values are length-prefixed with a varint of
// len+1 so that 0 can mean NULL.
func encodeResult(r *Result) []byte {
	n := len(r.SQL) + 64
	for _, row := range r.Rows {
		for _, v := range row {
			n += len(v) + 2
		}
	}
	b := make([]byte, 0, n)
	b = append(b, formatResult)
	b = appendString(b, r.SQL)
	b = appendStrings(b, r.Tables)
	b = appendStrings(b, r.Relations)
	b = binary.AppendUvarint(b, uint64(len(r.Fields)))
	for _, f := range r.Fields {
		b = appendString(b, string(f.Name))
		b = binary.BigEndian.AppendUint32(b, f.TableOID)
		b = binary.BigEndian.AppendUint16(b, f.TableAttributeNumber)
		b = binary.BigEndian.AppendUint32(b, f.DataTypeOID)
		b = binary.BigEndian.AppendUint16(b, uint16(f.DataTypeSize))
		b = binary.BigEndian.AppendUint32(b, uint32(f.TypeModifier))
		b = binary.BigEndian.AppendUint16(b, uint16(f.Format))
	}
	b = binary.AppendUvarint(b, uint64(len(r.Rows)))
	for _, row := range r.Rows {
		b = binary.AppendUvarint(b, uint64(len(row)))
		for _, v := range row {
			if v == nil {
				b = binary.AppendUvarint(b, 0)
				continue
			}
			b = binary.AppendUvarint(b, uint64(len(v))+1)
			b = append(b, v...)
		}
	}
	if r.Truncated {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	return appendString(b, r.CommandTag)
}

func encodeSQL(e *SQLEntry) []byte {
	b := make([]byte, 0, len(e.SQL)+32)
	b = append(b, formatSQL)
	b = appendString(b, e.SQL)
	b = appendStrings(b, e.Tables)
	return appendStrings(b, e.Relations)
}

// decoder reads what the append functions wrote; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() { d.err, d.b = errCorrupt, nil }

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length and rejects one that cannot fit in what is left, so a
// corrupt entry cannot make us allocate gigabytes.
func (d *decoder) count(minSize int) int {
	v := d.uvarint()
	if d.err == nil && v > uint64(len(d.b)/max(minSize, 1)) {
		d.fail()
		return 0
	}
	return int(v)
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b) {
		d.fail()
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string { return string(d.bytes(d.count(1))) }

func (d *decoder) strings() []string {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	ss := make([]string, 0, n)
	for range n {
		ss = append(ss, d.string())
	}
	return ss
}

func (d *decoder) u16() uint16 {
	if b := d.bytes(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if b := d.bytes(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

// decodeResult parses an encoded Result. The returned values alias b.
func decodeResult(b []byte) (*Result, error) {
	if len(b) == 0 || b[0] != formatResult {
		return nil, errCorrupt
	}
	d := &decoder{b: b[1:]}
	r := &Result{SQL: d.string(), Tables: d.strings(), Relations: d.strings()}
	nf := d.count(19)
	r.Fields = make([]pgproto3.FieldDescription, 0, nf)
	for range nf {
		r.Fields = append(r.Fields, pgproto3.FieldDescription{
			Name:                 []byte(d.string()),
			TableOID:             d.u32(),
			TableAttributeNumber: d.u16(),
			DataTypeOID:          d.u32(),
			DataTypeSize:         int16(d.u16()),
			TypeModifier:         int32(d.u32()),
			Format:               int16(d.u16()),
		})
	}
	nr := d.count(1)
	r.Rows = make([][][]byte, 0, nr)
	for range nr {
		nv := d.count(1)
		row := make([][]byte, nv)
		for i := range row {
			l := d.uvarint()
			if l == 0 || d.err != nil {
				continue
			}
			if l-1 > uint64(len(d.b)) {
				d.fail()
				break
			}
			row[i] = d.bytes(int(l - 1))
		}
		r.Rows = append(r.Rows, row)
	}
	if t := d.bytes(1); t != nil {
		r.Truncated = t[0] == 1
	}
	r.CommandTag = d.string()
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(d.b))
	}
	return r, nil
}

func decodeSQL(b []byte) (*SQLEntry, error) {
	if len(b) == 0 || b[0] != formatSQL {
		return nil, errCorrupt
	}
	d := &decoder{b: b[1:]}
	e := &SQLEntry{SQL: d.string(), Tables: d.strings(), Relations: d.strings()}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(d.b))
	}
	return e, nil
}
