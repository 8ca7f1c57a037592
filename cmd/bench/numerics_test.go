package main

import (
	"io"
	"testing"

	"github.com/selfcma/selfcma/internal/selfcma"
)

// TestNumericsWoodburyOption: -numerics 5 is self-CMA-ES's only, and its
// runs name it.
func TestNumericsWoodburyOption(t *testing.T) {
	o, err := parseOptions([]string{"-algorithms", "self-cma-es", "-numerics", "5"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c := o.config(algSelf); c.Numerics != selfcma.NumericsWoodbury {
		t.Fatalf("numerics %d, want %d", c.Numerics, selfcma.NumericsWoodbury)
	}
}
