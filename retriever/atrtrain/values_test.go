package atrtrain

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/atriumdb/atrium/catalog/benchload"
)

func TestSQLLiterals(t *testing.T) {
	db := &benchload.Database{
		DBID:       "Dorm_1",
		TableNames: []string{"Dorm", "Has_amenity", "Dorm_amenity"},
		ColumnNames: [][2]any{
			{-1.0, "*"}, {0.0, "dormid"}, {0.0, "dorm_name"}, {0.0, "gender"},
			{1.0, "dormid"}, {1.0, "amenid"}, {2.0, "amenid"}, {2.0, "amenity_name"},
		},
	}
	sql := `SELECT T1.dorm_name FROM dorm AS T1 JOIN has_amenity AS T2 ON T1.dormid = T2.dormid ` +
		`JOIN dorm_amenity AS T3 ON T2.amenid = T3.amenid WHERE T3.amenity_name = 'TV Lounge' ` +
		`AND gender != "X" AND T1.dorm_name LIKE '%Smith%' AND T3.amenity_name IN ('Gym', 'Pool') AND T1.dormid = '12'`
	got := sqlLiterals(db, sql)
	require.Equal(t, []literal{
		{table: "dorm_1.dorm_amenity", column: "amenity_name", value: "TV Lounge"},
		{table: "dorm_1.dorm", column: "gender", value: "X"},
		{table: "dorm_1.dorm", column: "dorm_name", value: "Smith"},
		{table: "dorm_1.dorm_amenity", column: "amenity_name", value: "Gym"},
		{table: "dorm_1.dorm_amenity", column: "amenity_name", value: "Pool"},
	}, got)
}
