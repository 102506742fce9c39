package ident

import (
	"reflect"
	"testing"
)

func TestSplit(t *testing.T) {
	for in, want := range map[string][]string{
		"custCntry":          {"cust", "cntry"},
		"HTTPServer":         {"http", "server"},
		"addr2":              {"addr", "2"},
		"singer_id":          {"singer", "id"},
		"SingerID":           {"singer", "id"},
		"singer id":          {"singer", "id"},
		"order-line_items":   {"order", "line", "items"},
		"CustomerID2Name":    {"customer", "id", "2", "name"},
		"carMakers":          {"car", "makers"},
		"ALLCAPS":            {"allcaps"},
		"T1.amenity_name":    {"t", "1", "amenity", "name"},
		"  ":                 nil,
		"née_Straße":         {"née", "straße"},
		"parseJSONResponse3": {"parse", "json", "response", "3"},
		`Odd "Name" here`:    {"odd", "name", "here"},
		"Straße_Größe":       {"straße", "größe"},
		"concert_singer.x-y": {"concert", "singer", "x", "y"},
		"camelCaseName":      {"camel", "case", "name"},
	} {
		if got := Split(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Split(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Words("custCntry_addr2"); got != "cust cntry addr 2" {
		t.Errorf("Words = %q", got)
	}
}
