package retriever

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/test/testdb"
)

// TestOpenPoolRegistersVector copies pgvector.Vector values in binary COPY,
// which needs the codec registered on the connection, both when the
// extension exists at connect time and when it is created afterwards (as
// migrations do on a fresh database).
func TestOpenPoolRegistersVector(t *testing.T) {
	for _, tc := range []struct {
		name string
		exts []string
	}{
		{"extension present", []string{"vector"}},
		{"extension created after connecting", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			pool, err := OpenPool(ctx, testdb.New(t, tc.exts...), 100, nil)
			require.NoError(t, err)
			defer pool.Close()
			_, err = pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector; CREATE TABLE v (id int, e vector(3))")
			require.NoError(t, err)
			n, err := pool.CopyFrom(ctx, pgx.Identifier{"v"}, []string{"id", "e"}, pgx.CopyFromRows([][]any{
				{1, pgvector.NewVector([]float32{1, 2, 3})},
				{2, pgvector.NewVector([]float32{0.5, 0, -1})},
			}))
			require.NoError(t, err)
			require.EqualValues(t, 2, n)
			var got pgvector.Vector
			require.NoError(t, pool.QueryRow(ctx, "SELECT e FROM v WHERE id = 2").Scan(&got))
			require.Equal(t, []float32{0.5, 0, -1}, got.Slice())
		})
	}
}
