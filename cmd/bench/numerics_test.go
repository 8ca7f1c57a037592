package main

import (
	"io"
	"testing"

	"github.com/selfcma/selfcma/internal/cmaes"
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

// TestNumericsLazyLongOption: -numerics 6 is CMA-ES's only, and 7 is
// unknown.
func TestNumericsLazyLongOption(t *testing.T) {
	o, err := parseOptions([]string{"-algorithms", "cma-es", "-numerics", "6"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c := o.config(algCMA); c.Numerics != cmaes.NumericsLazyLong {
		t.Fatalf("numerics %d, want %d", c.Numerics, cmaes.NumericsLazyLong)
	}
	for _, args := range [][]string{{"-numerics", "6"}, {"-algorithms", "self-cma-es", "-numerics", "6"}, {"-algorithms", "cma-es", "-numerics", "7"}} {
		if _, err := parseOptions(args, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
