// Evaluate, on the host, where CUTLASS puts tcgen05.mma's accumulator D and a tensor-memory A operand.
//
// CUTLASS's UMMA atoms (cute/atom/mma_traits_sm100.hpp) name the tensor-memory allocator of their
// accumulator (MMA_Traits<Op>::FrgTypeC) and, for the TS forms, of A (FrgTypeA): UMMA::tmem_frg<Value,
// Storage, N_SM, TmemAllocMode>, whose make() returns a tensor over tmem_ptr<Value>. For every case
// listed in cutlass_tmem_frg_list.inc (written by hardware/run_cutlass_tmem_frg.py) this program builds
// that tensor the way CUTLASS's collectives do,
//
//   D_ATOM: partition_fragment_C(make_tiled_mma(Op{}), (TILE_M, TILE_N))      shape ((M/N_SM, N), MMA_M, MMA_N)
//   A_ATOM: make_tensor<FrgTypeA>(partition_shape_A(make_tiled_mma(Op{}), (M, K)))
//   D_WS:   UMMA::tmem_frg_ws<Value, Storage, 1>::make(((M, N), 1, 1))   (no SM100 atom uses tmem_frg_ws)
//
// and decodes the tmem_ptr offset of every coordinate into (lane, column, first bit) of a 32-bit cell.
// An offset i counts elements of the value type T (cute/pointer.hpp: tmem_ptr<T>::operator+ adds
// rotr(i, OffsetShift), OffsetShift = log_2(trait_ratio(32, sizeof_bits<T>)); cute/arch/tmem_allocator_sm100.hpp:
// TMEM::DP<T> = (1 << 16) << OffsetShift elements per lane). It is decoded twice:
//
//   address:  p = raw_pointer_cast(tmem_ptr<T>(0) + i): lane = bits 16..23 of p, column = bits 0..15, and
//             the sub-word index s = the OffsetShift low bits of i that tmem_ptr rotates into the top of p;
//             first bit = s * sizeof_bits<T>. (GCC refuses to compile CuTe's mutually recursive
//             always-inline rotl/rotr for the host, so tmem_ptr's operator+ is evaluated at compile time
//             on the 32 one-bit offsets 1 << j, and p is the OR of those for the bits set in i: operator+ on
//             address 0 is the bit rotation rotr(i, OffsetShift), a permutation of the bits of i.)
//   bits:     b = i * sizeof_bits<T>: lane = b / TMEM::DP_b, column = (b % TMEM::DP_b) / 32, first bit = b % 32
//
// The recorded location is the address decoding (the address CUTLASS would compute). Checked (BAD lines):
// both decodings agree, TMEM::DP<T> * sizeof_bits<T> == TMEM::DP_b, the element lies inside one 32-bit
// cell (first bit + sizeof_bits <= 32), lane < 128, column < 512. Nothing runs on a GPU.
//
// Output (stdout), line based, parsed by run_cutlass_tmem_frg.py:
//   CASE <id> <value bits> <storage bits> <offset shift> <rows> <cols> <tiles along M> <tiles along N>
//   FRG <tmem_frg|tmem_frg_ws> <value bits> <storage bits> <N_SM> <TmemAllocMode as int, -1 for ws>
//   LAYOUT <cute's printing of the tensor's layout>
//   R <row> <tile_m> <tile_n> <lane column first_bit> x cols      (coordinate ((row, col), tile_m, tile_n))
//   BAD <id> <row> <col> <tile_m> <tile_n> <reason ...>
//   END <id>
//   DONE <number of BAD lines>

#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>

#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/mma_traits_sm100.hpp>
#include <cute/arch/tmem_allocator_sm100.hpp>
#include <cutlass/numeric_types.h>

using namespace cute;

template <class L>
std::string show(L const& layout) {
  std::ostringstream os;
  os << layout;
  return os.str();
}

// The template arguments of the allocator a tensor was made with.
template <class F> struct frg_info;
template <class V, class S, int N_SM, UMMA::TmemAllocMode Mode>
struct frg_info<UMMA::tmem_frg<V, S, N_SM, Mode>> {
  static constexpr int storage_bits = int(sizeof_bits_v<S>);
  static void print() {
    std::printf("FRG tmem_frg %d %d %d %d\n", int(sizeof_bits_v<V>), storage_bits, N_SM, int(Mode));
  }
};
template <class V, class S, int N_SM>
struct frg_info<UMMA::tmem_frg_ws<V, S, N_SM>> {
  static constexpr int storage_bits = int(sizeof_bits_v<S>);
  static void print() {
    std::printf("FRG tmem_frg_ws %d %d %d -1\n", int(sizeof_bits_v<V>), storage_bits, N_SM);
  }
};

// tmem_ptr<T>(0) + (1 << j) for j = 0..31, evaluated by the compiler (see above).
template <class T>
struct OneBitOffsets {
  uint32_t addr[32];
  constexpr OneBitOffsets() : addr{} {
    for (int j = 0; j < 32; ++j) addr[j] = raw_pointer_cast(tmem_ptr<T>(0u) + (uint32_t(1) << j));
  }
};

template <class Frg, class Tensor>
int decode(char const* id, Tensor const& tensor) {
  using T = typename remove_cvref_t<decltype(tensor.data())>::value_type;
  using Ptr = tmem_ptr<T>;
  constexpr int value_bits = int(sizeof_bits_v<T>);
  constexpr int shift = int(Ptr::OffsetShift);
  long long const dp_b = (long long)TMEM::DP_b{};
  long long const dp_t = (long long)TMEM::DP<T>{};
  auto const layout = tensor.layout();
  static_assert(decltype(rank(layout))::value == 3, "expected ((rows, cols), tiles_m, tiles_n)");
  int const rows = int(size<0, 0>(layout));
  int const cols = int(size<0, 1>(layout));
  int const tiles_m = int(size<1>(layout));
  int const tiles_n = int(size<2>(layout));
  static constexpr OneBitOffsets<T> table{};
  int bad = 0;
  std::ostringstream problems;

  std::printf("CASE %s %d %d %d %d %d %d %d\n", id, value_bits, frg_info<Frg>::storage_bits,
              shift, rows, cols, tiles_m, tiles_n);
  frg_info<Frg>::print();
  std::printf("LAYOUT %s\n", show(layout).c_str());
  if (dp_t * value_bits != dp_b) {
    problems << "BAD " << id << " -1 -1 -1 -1 dp_stride " << dp_t << " " << value_bits << "\n";
    ++bad;
  }
  for (int tn = 0; tn < tiles_n; ++tn) {
    for (int tm = 0; tm < tiles_m; ++tm) {
      for (int r = 0; r < rows; ++r) {
        std::printf("R %d %d %d", r, tm, tn);
        for (int c = 0; c < cols; ++c) {
          long long const i = (long long)layout(make_coord(make_coord(r, c), tm, tn));
          // decoding 1: the address tmem_ptr arithmetic produces
          uint32_t addr = 0;
          for (int j = 0; j < 32; ++j)
            if ((uint64_t(i) >> j) & 1u) addr |= table.addr[j];
          long long const sub = shift == 0 ? 0 : (long long)(addr >> (32 - shift));
          uint32_t const word = shift == 0 ? addr : (addr & ((1u << (32 - shift)) - 1u));
          long long const lane = word >> 16, column = word & 0xFFFF, first_bit = sub * value_bits;
          // decoding 2: the bit address
          long long const b = i * value_bits;
          long long const lane2 = b / dp_b, column2 = (b % dp_b) / 32, bit2 = b % 32;
          std::ostringstream at;
          at << "BAD " << id << " " << r << " " << c << " " << tm << " " << tn << " ";
          if (i < 0 || i >= (1ll << 32)) { problems << at.str() << "offset_out_of_range " << i << "\n"; ++bad; }
          if (lane != lane2 || column != column2 || first_bit != bit2) {
            problems << at.str() << "decodings_differ " << lane << " " << column << " " << first_bit << " "
                     << lane2 << " " << column2 << " " << bit2 << "\n";
            ++bad;
          }
          if (first_bit + value_bits > 32) {
            problems << at.str() << "straddles_cell " << first_bit << " " << value_bits << "\n";
            ++bad;
          }
          if (lane >= 128) { problems << at.str() << "lane_out_of_range " << lane << "\n"; ++bad; }
          if (column >= 512) { problems << at.str() << "column_out_of_range " << column << "\n"; ++bad; }
          std::printf(" %lld %lld %lld", lane, column, first_bit);
        }
        std::printf("\n");
      }
    }
  }
  std::printf("%s", problems.str().c_str());
  std::printf("END %s\n", id);
  return bad;
}

template <class Op, int TILE_M, int TILE_N>
int d_atom(char const* id) {
  auto tiled = make_tiled_mma(Op{});
  using FrgC = typename MMA_Traits<Op>::FrgTypeC;
  static_assert(is_same_v<FrgC, typename decltype(tiled)::FrgTypeC>, "TiledMMA uses the traits' FrgTypeC");
  auto tensor = partition_fragment_C(tiled, make_shape(Int<TILE_M>{}, Int<TILE_N>{}));
  return decode<FrgC>(id, tensor);
}

template <class Op, int M, int K>
int a_atom(char const* id) {
  auto tiled = make_tiled_mma(Op{});
  using FrgA = typename MMA_Traits<Op>::FrgTypeA;
  static_assert(K == MMA_Traits<Op>::K, "K is one MMA's K");
  auto tensor = make_tensor<FrgA>(partition_shape_A(tiled, make_shape(Int<M>{}, Int<K>{})));
  return decode<FrgA>(id, tensor);
}

template <class V, class S, int M, int N>
int d_ws(char const* id) {
  using F = UMMA::tmem_frg_ws<V, S, 1>;
  auto tensor = make_tensor<F>(make_shape(make_shape(Int<M>{}, Int<N>{}), _1{}, _1{}));
  return decode<F>(id, tensor);
}

int main() {
  int bad = 0;
#define D_ATOM(ID, OP, TILE_M, TILE_N) bad += d_atom<OP, TILE_M, TILE_N>(ID);
#define A_ATOM(ID, OP, M, K) bad += a_atom<OP, M, K>(ID);
#define D_WS(ID, V, S, M, N) bad += d_ws<V, S, M, N>(ID);
#include "cutlass_tmem_frg_list.inc"
#undef D_ATOM
#undef A_ATOM
#undef D_WS
  std::printf("DONE %d\n", bad);
  return bad == 0 ? 0 : 1;
}
