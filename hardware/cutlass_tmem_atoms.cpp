// Evaluate CUTLASS's SM100 tensor-memory copy atoms (cute/atom/copy_traits_sm100.hpp) on the host.
//
// For every atom listed in cutlass_tmem_atoms_list.inc (generated from the header by
// hardware/run_cutlass_tmem_atoms.py, one ATOM(name, is_store) line per Copy_Traits specialization)
// this program evaluates, for every thread of the warp and every bit of the thread's registers,
// the TMEM bit address CuTe assigns to it:
//
//   LOAD:  register bit (t, v) holds logical bit  DstLayout(t, v)   (SrcLayout is the TMEM side)
//   STORE: register bit (t, v) holds logical bit  SrcLayout(t, v)   (DstLayout is the TMEM side)
//   logical bit b lies at TMEM bit address        ValID(b) = lane * TMEM::DP_b + column * 32 + bit
//
// (copy_unpack requires the TMEM tensor's layout to be ValID, so ValID is the map from logical bit
// to address.) Register bit v is bit v % 32 of register v / 32. Every 16-bit piece j (bits
// [16j, 16j+16)) is checked to map onto 16 consecutive bits of one cell starting at bit 0 or 16,
// and is printed as (lane, column, half). Nothing runs on a GPU: only the layouts are evaluated.
//
// Output (stdout), line based, parsed by run_cutlass_tmem_atoms.py:
//   ATOM <name> <LOAD|STORE> <threads> <register bits per thread>
//   LAYOUT <ThrID|ValID|SrcLayout|DstLayout|RefLayout> <cute's printing of the layout>
//   T <logical thread> <thread index ThrID(t)> <lane col half> x (bits / 16)
//   BAD <name> <thread> <piece> <reason>          (a piece that is not one 16-bit half of a cell)
//   END <name>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include <cute/tensor.hpp>
#include <cute/atom/copy_traits_sm100.hpp>

using namespace cute;

template <class L>
std::string show(L const& layout) {
  std::ostringstream os;
  os << layout;
  return os.str();
}

template <class Op>
int evaluate(char const* name, bool is_store) {
  using Traits = Copy_Traits<Op>;
  using ThrID = typename Traits::ThrID;
  using ValID = typename Traits::ValID;
  typename Traits::SrcLayout const src{};
  typename Traits::DstLayout const dst{};

  int const threads = int(size<0>(src));
  int const bits = int(is_store ? size<1>(src) : size<1>(dst));
  int const dp_b = int(TMEM::DP_b{});
  int bad = 0;
  std::ostringstream problems;

  std::printf("ATOM %s %s %d %d\n", name, is_store ? "STORE" : "LOAD", threads, bits);
  std::printf("LAYOUT ThrID %s\n", show(ThrID{}).c_str());
  std::printf("LAYOUT ValID %s\n", show(ValID{}).c_str());
  std::printf("LAYOUT SrcLayout %s\n", show(typename Traits::SrcLayout{}).c_str());
  std::printf("LAYOUT DstLayout %s\n", show(typename Traits::DstLayout{}).c_str());
  std::printf("LAYOUT RefLayout %s\n", show(typename Traits::RefLayout{}).c_str());

  for (int t = 0; t < threads; ++t) {
    std::printf("T %d %d", t, int(ThrID{}(t)));
    for (int j = 0; j < bits / 16; ++j) {
      long long base = -1;
      for (int k = 0; k < 16; ++k) {
        int const v = 16 * j + k;
        long long const logical = is_store ? (long long)src(t, v) : (long long)dst(t, v);
        long long const addr = (long long)ValID{}(logical);
        if (k == 0) {
          base = addr;
          if (addr % 16 != 0) {
            problems << "BAD " << name << " " << t << " " << j << " unaligned_piece_start " << addr << "\n";
            ++bad;
          }
        } else if (addr != base + k) {
          problems << "BAD " << name << " " << t << " " << j << " noncontiguous_bit " << k << " " << addr << "\n";
          ++bad;
        }
      }
      long long const lane = base / dp_b;
      long long const in_lane = base % dp_b;
      std::printf(" %lld %lld %lld", lane, in_lane / 32, (in_lane % 32) / 16);
    }
    std::printf("\n");
  }
  std::printf("%s", problems.str().c_str());
  std::printf("END %s\n", name);
  return bad;
}

int main() {
  int bad = 0;
#define ATOM(NAME, IS_STORE) bad += evaluate<NAME>(#NAME, IS_STORE);
#include "cutlass_tmem_atoms_list.inc"
#undef ATOM
  std::printf("DONE %d\n", bad);
  return bad == 0 ? 0 : 1;
}
