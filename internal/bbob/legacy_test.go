package bbob

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"
)

// Golden values printed with %a by the legacy C code of COCO
// (suite_bbob_legacy_code.c) compiled with gcc 12.2 -O2
// -ffp-contract=off against glibc 2.36.
func TestLegacyGolden(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want []float64
	}{
		{"unif(6, 10019)", unif(6, 10019), []float64{
			0x1.d41a4663a8349p-3, 0x1.0878647610f0dp-1, 0x1.623a4642c4749p-5,
			0x1.a0e7092341ce1p-3, 0x1.180b83523017p-1, 0x1.e9f9e8cfd3f3dp-1}},
		{"gauss(6, 10019)", gauss(6, 10019), []float64{
			-0x1.4d714fc347e12p-1, 0x1.97e17e7def3dcp-1, -0x1.1a6037880c636p+1,
			0x1.26f114e40df6cp-2, 0x1.013766115410bp+0, -0x1.2c65843819042p-2}},
		{"rotation(3, 1000019)", rotation(3, 1000019), []float64{
			-0x1.f018a406ada19p-4, -0x1.7eff8b5386137p-1, 0x1.4e1506ac69647p-1,
			-0x1.54e40970c1f74p-1, -0x1.b48edd2ad6e35p-2, -0x1.3983e0c08fc3cp-1,
			0x1.78f36f18671a8p-1, -0x1.04679cff95b06p-1, -0x1.c920a1a8c800ep-2}},
	} {
		for i := range c.want {
			if c.got[i] != c.want[i] {
				t.Errorf("%s[%d] = %x, want %x", c.name, i, c.got[i], c.want[i])
			}
		}
	}
	// All 1600 entries of a 40-D rotation, by their FNV-1a hash.
	h := fnv.New64a()
	for _, v := range rotation(40, 1090019) {
		binary.Write(h, binary.LittleEndian, v)
	}
	if got, want := h.Sum64(), uint64(0xd42c0a19fc31e1e7); got != want {
		t.Errorf("hash of rotation(40, 1090019) = %#x, want %#x", got, want)
	}
	if got := computeFOpt(18, 7); got != computeFOpt(17, 7) {
		t.Errorf("f18 and f17 f_opt differ: %v, %v", got, computeFOpt(17, 7))
	}
}

// Correctly rounded results, from mpmath at 300 bits; the first 16 cases
// are ones that glibc 2.36 rounds the other way.
var crCases = []struct {
	fn   string
	x, y float64
}{
	{"log", 0x1.422e8686845d1p-1, -0x1.da536a40d3b45p-2},
	{"cos", 0x1.34ecac96d4063p+2, 0x1.d4329a7c76a56p-4},
	{"log", 0x1.b240a55f64815p-1, -0x1.514d6643dc236p-3},
	{"log", 0x1.ddfa6e2bbbf4ep-1, -0x1.19a377576e408p-4},
	{"log", 0x1.d32270efa644ep-1, -0x1.77a21941a1962p-4},
	{"cos", 0x1.22ce2a0f626d0p+0, 0x1.af5fb258828adp-2},
	{"log", 0x1.6f66f1f6decdep-1, -0x1.53d51d63050cap-2},
	{"log", 0x1.9ceed6df39ddbp-1, -0x1.b8668d9f4d005p-3},
	{"log", 0x1.6a55a856d4ab5p-1, -0x1.620e0004236f5p-2},
	{"cos", 0x1.38d8e94d2c4c4p+2, 0x1.6649bc14fcca9p-3},
	{"cos", 0x1.3e4966a469d27p-1, 0x1.a03695e4cfa15p-1},
	{"cos", 0x1.2cc1fa2673b8dp+0, 0x1.8af3bf24691b3p-2},
	{"cos", 0x1.c3a14b38cd4a9p+0, -0x1.8995eca79bea3p-3},
	{"log", 0x1.b0251cf7604a4p-1, -0x1.5b441ca55e752p-3},
	{"cos", 0x1.01f3f48a2fbb3p+2, -0x1.42b005c016e19p-1},
	{"cos", 0x1.b50949002b2fbp+0, -0x1.166f300f71611p-3},
	{"log", 0x1.3eecf89059360p-1, -0x1.e4ba347bd50a3p-2},
	{"cos", 0x1.2a4a4da368d17p+2, -0x1.a68d217c8877dp-5},
	{"log", 0x1.97239c6c3047fp-1, -0x1.d556ee825f5d8p-3},
	{"cos", 0x1.7afb53aed2136p+2, 0x1.dee40a9b3d735p-1},
	{"log", 0x1.7ad3fc69bae32p-1, -0x1.3478d35ee28afp-2},
	{"cos", 0x1.72e38e21ea30ep+2, 0x1.c4396b3439c27p-1},
	{"log", 0x1.db38beb9086e0p-6, -0x1.c527de3f8d8aap+1},
	{"cos", 0x1.7679d85f9a787p+1, -0x1.f41a3e5c2aad9p-1},
	{"log", 0x1.e2ffa6cff07a8p-1, -0x1.ddae9675ea96cp-5},
	{"cos", 0x1.04f7d8d1603c8p+2, -0x1.2f9bce0604b6fp-1},
	{"log", 0x1.cd42d44a09da2p-1, -0x1.ab75e236ab125p-4},
	{"cos", 0x1.6c2ebbf5c4438p-1, 0x1.83d95d45482d4p-1},
	{"log", 0x1.0000000000000p+0, 0x0.0p+0},
	{"log", 0x1.17f7d4ed8c33ep-329, -0x1.c7e96ee5c7f9dp+7},
	{"log", 0x1.0000000000000p-1, -0x1.62e42fefa39efp-1},
	{"log", 0x0.0000000000001p-1022, -0x1.74385446d71c3p+9},
	{"log", 0x1.fffffffffffffp+1023, 0x1.62e42fefa39efp+9},
	{"log", 0x1.fffffffffffffp-1, -0x1.0000000000000p-53},
	{"cos", 0x0.0p+0, 0x1.0000000000000p+0},
	{"cos", 0x1.56e1fc2f8f359p-997, 0x1.0000000000000p+0},
	{"cos", 0x1.921fb54442d18p+0, 0x1.1a62633145c07p-54},
	{"cos", 0x1.2d97c7f3321d2p+2, -0x1.a79394c9e8a0ap-53},
	{"cos", 0x1.921fb54442d18p+2, 0x1.0000000000000p+0},
	{"cos", 0x1.921fb54442d18p+1, -0x1.0000000000000p+0},
	{"cos", 0x1.f440000000000p+9, 0x1.8dbff75eb664fp-4},
	{"cos", 0x1.e240c9fbe76c9p+16, 0x1.a74d27c41b22ap-5},
}

func TestCorrectlyRounded(t *testing.T) {
	for _, c := range crCases {
		var got float64
		if c.fn == "log" {
			got = crLog(c.x)
		} else {
			got = crCos(c.x)
		}
		if got != c.y {
			t.Errorf("%s(%x) = %x, want %x", c.fn, c.x, got, c.y)
		}
	}
	// Within an ulp of Go's faithful math.Log and math.Cos.
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		x := rnd.Float64()
		if got, want := crLog(x), math.Log(x); math.Abs(got-want) > ulp(want) {
			t.Fatalf("crLog(%x) = %x, math.Log %x", x, got, want)
		}
		x *= 2 * math.Pi
		if got, want := crCos(x), math.Cos(x); math.Abs(got-want) > ulp(want) {
			t.Fatalf("crCos(%x) = %x, math.Cos %x", x, got, want)
		}
	}
}

func ulp(x float64) float64 {
	x = math.Abs(x)
	return math.Nextafter(x, math.Inf(1)) - x
}
