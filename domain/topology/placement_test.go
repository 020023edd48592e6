package topology

import "testing"

func TestPlacementConflicts(t *testing.T) {
	front := func(pos, h int) Placement { return Placement{Position: pos, Height: h} }
	rear := func(pos, h int) Placement { return Placement{Position: pos, Height: h, Rear: true} }
	full := func(pos, h int) Placement { return Placement{Position: pos, Height: h, FullDepth: true} }
	tests := []struct {
		name string
		a, b Placement
		want bool
	}{
		{"adjacent units", full(10, 2), full(12, 1), false},
		{"overlapping top unit", full(10, 2), full(11, 1), true},
		{"same unit front and rear, half depth", front(5, 1), rear(5, 1), false},
		{"same unit front and front", front(5, 1), front(5, 1), true},
		{"full depth blocks the rear", full(5, 2), rear(6, 1), true},
		{"rear blocked by full depth", rear(6, 1), full(5, 2), true},
		{"below", full(1, 1), full(2, 4), false},
		{"contained", full(1, 42), front(20, 1), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Conflicts(tt.b); got != tt.want {
				t.Errorf("%v vs %v: got %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestPlacementString(t *testing.T) {
	if s := (Placement{Position: 10, Height: 2, FullDepth: true}).String(); s != "U10-U11, full depth" {
		t.Errorf("got %q", s)
	}
	if s := (Placement{Position: 3, Height: 1, Rear: true}).String(); s != "U3, rear" {
		t.Errorf("got %q", s)
	}
}
