package proxy

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
)

// VersionHandler answers `SHOW atrium.version` (any case, optional
// semicolon) with one text row in column atrium_version.
func VersionHandler(version string) Handler {
	return HandlerFunc(func(_ context.Context, _ SessionInfo, sql string) (Statement, error) {
		if !isShowVersion(sql) {
			return nil, nil
		}
		return versionStatement(version), nil
	})
}

// isShowVersion matches cheaply: it rejects anything not starting with
// "show" before normalising.
func isShowVersion(sql string) bool {
	s := strings.TrimSpace(sql)
	if len(s) < 19 || !strings.EqualFold(s[:4], "show") {
		return false
	}
	s = strings.TrimSpace(strings.TrimSuffix(s, ";"))
	f := strings.Fields(s)
	return len(f) == 2 && strings.EqualFold(f[0], "show") && strings.EqualFold(f[1], "atrium.version")
}

type versionStatement string

func (versionStatement) Kind() string { return "version" }

func (versionStatement) Describe(context.Context, Upstream) ([]pgproto3.FieldDescription, error) {
	return []pgproto3.FieldDescription{{Name: []byte("atrium_version"), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1}}, nil
}

func (v versionStatement) Execute(_ context.Context, _ Upstream, w RowWriter) (string, error) {
	if err := w.Row([][]byte{[]byte(v)}); err != nil {
		return "", err
	}
	return "SHOW", nil
}
