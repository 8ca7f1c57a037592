// Command filter copies the subset of the COCO reference data used by the
// tests of package bbob into the testdata directory: every line for
// dimensions 2, 10, 20 and 40, unchanged, split into gzip files of at most
// about 1 MiB.
//
// Usage, from internal/bbob:
//
//	go run ./testdata/filter -src DIR
//
// where DIR holds bbob_vectors.jsonl.gz and bbob_xopt.jsonl.gz.
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
)

var dims = map[int]bool{2: true, 10: true, 20: true, 40: true}

// part returns the output file of a line: the vectors are split by
// dimension and, in 40-D, by function, to keep every file small.
type part func(function, dimension int) string

func main() {
	src := flag.String("src", "", "directory of the reference data")
	dst := flag.String("dst", "testdata", "output directory")
	flag.Parse()
	if *src == "" {
		flag.Usage()
		os.Exit(2)
	}
	filter(filepath.Join(*src, "bbob_xopt.jsonl.gz"), *dst, func(int, int) string {
		return "xopt.jsonl.gz"
	})
	filter(filepath.Join(*src, "bbob_vectors.jsonl.gz"), *dst, func(f, d int) string {
		switch {
		case d < 40:
			return "vectors_d02-20.jsonl.gz"
		case f <= 12:
			return "vectors_d40_f01-12.jsonl.gz"
		}
		return "vectors_d40_f13-24.jsonl.gz"
	})
}

func filter(in, dst string, name part) {
	f, err := os.Open(in)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		log.Fatal(err)
	}
	type out struct {
		f  *os.File
		zw *gzip.Writer
		n  int
	}
	outs := map[string]*out{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var rec struct{ Function, Dimension int }
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			log.Fatal(err)
		}
		if !dims[rec.Dimension] {
			continue
		}
		nm := name(rec.Function, rec.Dimension)
		o := outs[nm]
		if o == nil {
			fo, err := os.Create(filepath.Join(dst, nm))
			if err != nil {
				log.Fatal(err)
			}
			zw, _ := gzip.NewWriterLevel(fo, gzip.BestCompression)
			o = &out{f: fo, zw: zw}
			outs[nm] = o
		}
		o.zw.Write(sc.Bytes())
		o.zw.Write([]byte{'\n'})
		o.n++
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	for nm, o := range outs {
		if err := o.zw.Close(); err != nil {
			log.Fatal(err)
		}
		if err := o.f.Close(); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d lines\n", nm, o.n)
	}
}
