package proxy

import (
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
)

// converter turns text-format values into binary format for clients that
// bind a virtual portal with binary result columns (pgx does for integers,
// floats, timestamps, ...), using pgx's codecs for the built-in types.
type converter struct {
	m   *pgtype.Map
	out [][]byte
}

func newConverter() *converter { return &converter{m: pgtype.NewMap()} }

func (cv *converter) toBinary(fields []pgproto3.FieldDescription, formats []int16, values [][]byte) ([][]byte, error) {
	out := cv.out[:0]
	for i, v := range values {
		if v == nil || formatOf(formats, i) == 0 {
			out = append(out, v)
			continue
		}
		oid := fields[i].DataTypeOID
		t, ok := cv.m.TypeForOID(oid)
		if !ok {
			return nil, &Error{Code: codeFeatureNotSupp,
				Message: "binary result format is not available for column \"" + string(fields[i].Name) + "\"",
				Hint:    "Request text format for this column."}
		}
		val, err := t.Codec.DecodeValue(cv.m, oid, pgtype.TextFormatCode, v)
		if err != nil {
			return nil, &Error{Code: "22P02", Message: "invalid text value for column \"" + string(fields[i].Name) + "\"", Err: err}
		}
		b, err := cv.m.Encode(oid, pgtype.BinaryFormatCode, val, nil)
		if err != nil {
			return nil, &Error{Code: codeFeatureNotSupp,
				Message: "binary result format is not available for column \"" + string(fields[i].Name) + "\"",
				Hint:    "Request text format for this column.", Err: err}
		}
		out = append(out, b)
	}
	cv.out = out
	return out, nil
}
