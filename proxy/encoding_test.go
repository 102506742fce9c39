package proxy

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClientTextConversion(t *testing.T) {
	for _, tc := range []struct{ enc, client, utf8 string }{
		{"UTF8", "café", "café"},
		{"SQL_ASCII", "caf\xe9", "caf\xe9"}, // no conversion, as in PostgreSQL
		{"LATIN1", "/* nl: caf\xe9 */", "/* nl: café */"},
		{"LATIN1", "plain ascii", "plain ascii"},
		{"WIN1251", "\xcf\xf0\xe8\xe2\xe5\xf2", "Привет"},
		{"EUC_JP", "\xc6\xfc\xcb\xdc", "日本"},
	} {
		got, err := decodeClientText(tc.enc, tc.client)
		require.NoError(t, err, tc.enc)
		require.Equal(t, tc.utf8, got, tc.enc)
		back, err := encodeClientText(tc.enc, tc.utf8)
		require.NoError(t, err, tc.enc)
		require.Equal(t, tc.client, back, tc.enc)
	}
	_, err := encodeClientText("LATIN1", "SELECT '日本'")
	var pe *Error
	require.True(t, errors.As(err, &pe))
	require.Equal(t, "22P05", pe.Code)
	_, err = decodeClientText("MULE_INTERNAL", "\x81\xe9")
	require.True(t, errors.As(err, &pe))
	require.Equal(t, "0A000", pe.Code)
}
