"""The CuTe DSL adapter and its campaign, without the DSL (issue 15): the adapter's protocol on recorded
answers, the comparison on recorded cases (expectations from the manual and pycute), and the recorded
campaign (tests/hardware/cute_dsl_campaign.json.gz, nvidia-cutlass-dsl 4.8.1) replayed against spec today,
with its disagreements exactly those kept in counterexamples/against/cute_dsl/disagreements.json."""
import gzip
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import io
import json
import os

import pytest

from solver.fuzz.adapters import cute_dsl as adapter
from solver.fuzz.compilers import cute_dsl as judge
from spec.mma import descriptor as spec_descriptor

HERE = TESTS_DIR
RECORDING = os.path.join(HERE, "hardware", "cute_dsl_campaign.json.gz")
KEPT = os.path.join(HERE, "..", "counterexamples", "against", "cute_dsl", "disagreements.json")

# Recorded from the DSL (nvidia-cutlass-dsl 4.8.1, host-side @cute.jit, no GPU).
SM100_F16_K = ({"arch": "sm100", "operand": "B", "dtype": "f16", "major": "K", "atom": None,
                "mma_tiler": [128, 128, 64], "cta_group": 1, "smem_base": 1024, "stages": 1},
               {"verdict": "accept", "detail": "built", "version": "nvidia-cutlass-dsl 4.8.1", "atom": "K_SW128",
                "layout": "S<3,4,3> o 0 o ((128,16),1,4,1):((64,1),0,16,0)", "swizzle": "S<3,4,3>",
                "partitioned": "((128,16),1,4,1):((64,1),0,16,0)",
                "descriptors": ["0x4000404000010040", "0x4000404000010042", "0x4000404000010044",
                                "0x4000404000010046"]})
SM100_TF32_MN_SW64 = ({"arch": "sm100", "operand": "B", "dtype": "tf32", "major": "MN", "atom": "MN_SW64",
                       "mma_tiler": [128, 128, 32], "cta_group": 1, "smem_base": 1024, "stages": 1},
                      {"verdict": "accept", "detail": "built", "atom": "MN_SW64",
                       "layout": "S<2,4,3> o 0 o (((16,8),8),1,4,1):(((1,512),16),0,128,0)", "swizzle": "S<2,4,3>",
                       "partitioned": "(((16,8),8),1,4,1):(((1,512),16),0,128,0)",
                       "descriptors": ["0x8000400000800040", "0x8000400000800060", "0x8000400000800080",
                                       "0x80004000008000a0"]})
SM100_F16_MN_ATOM32 = ({"arch": "sm100", "operand": "B", "dtype": "f16", "major": "MN", "atom": "MN_SW128_32B",
                        "mma_tiler": [128, 128, 64], "cta_group": 1, "smem_base": 1024, "stages": 1},
                       {"verdict": "accept", "detail": "built", "atom": "MN_SW128_32B",
                        "layout": "S<2,5,2> o 0 o (((64,2),16),1,4,1):(((1,4096),64),0,1024,0)",
                        "swizzle": "S<2,5,2>", "partitioned": "(((64,2),16),1,4,1):(((1,4096),64),0,1024,0)",
                        "descriptors": ["0x2000402002000040", "0x20004020020000c0", "0x2000402002000140",
                                        "0x20004020020001c0"]})
SM90_F16_MN = ({"arch": "sm90", "operand": "B", "dtype": "f16", "major": "MN", "atom": None,
                "mma_tiler": [64, 128, 64], "cta_group": 1, "smem_base": 1024, "stages": 1},
               {"verdict": "accept", "detail": "built", "atom": "MN_SW128",
                "layout": "S<3,4,3> o 0 o ((64,2),(8,8),(1,1)):((1,4096),(64,512),(0,0))", "swizzle": "S<3,4,3>",
                "partitioned": "(((64,2),16),1,4,(1,1)):(((1,4096),64),0,1024,(0,0))",
                "descriptors": ["0x4000004002000040", "0x40000040020000c0", "0x4000004002000140",
                                "0x40000040020001c0"]})
SM90_E4M3_MN = ({"arch": "sm90", "operand": "B", "dtype": "e4m3", "major": "MN", "atom": None,
                 "mma_tiler": [64, 128, 64], "cta_group": 1, "smem_base": 1024, "stages": 1},
                {"verdict": "refuse", "detail": "MLIRError: error: unknown: only support f16/bf16 with mn-major"})
SM90_TF32_K = ({"arch": "sm90", "operand": "B", "dtype": "tf32", "major": "K", "atom": None,
                "mma_tiler": [64, 128, 64], "cta_group": 1, "smem_base": 1024, "stages": 1},
               {"verdict": "refuse", "detail": "TypeError: unsupported a_dtype and b_dtype, got TFloat32 and TFloat32"})


# --- protocol ----------------------------------------------------------------------------------------------

def test_protocol_answers_in_order_and_skips_blank_lines():
    recorded = {json.dumps(SM100_F16_K[0], sort_keys=True): SM100_F16_K[1]}
    build = lambda case: recorded[json.dumps(case, sort_keys=True)]   # noqa: E731
    lines = [json.dumps({"target": "cute_dsl", "case": SM100_F16_K[0]}), "", "not json",
             json.dumps({"target": "desc", "case": {}}),
             json.dumps({"target": "cute_dsl", "case": {**SM100_F16_K[0], "atom": "K_SW128_32B"}}),
             json.dumps({"target": "cute_dsl", "case": {**SM100_F16_K[0], "arch": "sm90", "cta_group": 2}})]
    out = io.StringIO()
    assert adapter.serve(lines, out, build) == 5
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert answers[0] == SM100_F16_K[1]
    assert answers[1]["verdict"] is None and answers[1]["detail"].startswith("not JSON")
    assert answers[2] == {"verdict": None, "detail": adapter.NOT_A_CASE}
    assert answers[3]["verdict"] is None and "SmemLayoutAtomKind" in answers[3]["detail"]
    assert answers[4]["verdict"] is None and "cta_group" in answers[4]["detail"]


def test_printed_descriptors_are_read_as_unsigned_words_by_k_block():
    text = "noise\nLPDESC 1 4611756662049538114\nLPDESC 0 -1\n"
    assert adapter.parse_printed(text) == ["0xffffffffffffffff", "0x4000404000010042"]


def test_the_dsl_verifier_message_is_one_line_without_colours():
    error = RuntimeError("\x1b[91merror[INTERNAL]:\x1b[0m The compiler could not build valid IR.\n"
                         "  \x1b[91merror:\x1b[0m IR verification failed: error: unknown: 'op' Not a canonical\n"
                         "         UMMA_K Layout\n  \x1b[92msuggestion:\x1b[0m Check the source")
    line = adapter.first_error_line(error)
    assert line.startswith("RuntimeError: error: IR verification failed") and "UMMA_K Layout" in line
    assert "\n" not in line and "suggestion" not in line


# --- comparison on recorded cases --------------------------------------------------------------------------

def test_k_major_128b_descriptor_has_the_manuals_fields():
    """PTX 9.7.16.3.3 K-major 128B: SBO = 8 rows x 128 B = 1024; LBO unused ('assumed 1': 16 B); the start
    is the tile's address and each k-block (16 f16 = 32 B) moves it by 32 B; base offset 0."""
    case, answer = SM100_F16_K
    fields = [spec_descriptor.decode("sm100", int(w, 16)) for w in answer["descriptors"]]
    assert [f.start_address for f in fields] == [1024, 1056, 1088, 1120]
    assert {(f.stride_byte_offset, f.leading_byte_offset, f.swizzle, f.base_offset) for f in fields} == \
        {(1024, 16, "128B", 0)}
    finding = judge.compare(case, answer)
    assert finding.kind == "agree" and finding.elements == 4 * 128 * 16


def test_a_wrong_sbo_misreads_the_second_row_group():
    case, answer = SM100_F16_K
    word = spec_descriptor.with_fields(spec_descriptor.decode("sm100", int(answer["descriptors"][0], 16)),
                                       stride_byte_offset=512).raw
    finding = judge.compare(case, {**answer, "descriptors": [f"0x{word:016x}"]})
    assert finding.kind == "descriptor-misreads-layout"
    assert finding.witness["element"] == {"mn": 8, "k": 0}   # rows 0-7 need no SBO


def test_table54_breaks_are_reported_for_tf32_and_16_bit_mn_major():
    """PTX Table 54: 32-bit MN-major only 128B_atom32B; 8/16-bit MN-major never 128B_atom32B."""
    for case, answer in (SM100_TF32_MN_SW64, SM100_F16_MN_ATOM32):
        finding = judge.compare(case, answer)
        assert finding.kind == "accepts-broken-rule" and finding.rules == ["operand.swizzle.table54"]
        assert finding.witness is None        # self-consistent: the descriptors read the DSL's layout


def test_sm90_mn_major_f16_agrees():
    finding = judge.compare(*SM90_F16_MN)
    assert finding.kind == "agree" and finding.elements == 4 * 128 * 16


def test_refusals_are_judged_by_spec_legality():
    assert judge.compare(*SM90_E4M3_MN).kind == "agree"              # wgmma transposes f16/bf16 only
    assert judge.compare(*SM90_TF32_K).kind == "refuses-legal"       # wgmma has .tf32, K-major


def test_tile_addresses_match_pycute():
    pycute = pytest.importorskip("pycute")
    case, answer = SM100_TF32_MN_SW64
    layout = pycute.Layout((((16, 8), 8), 1, 4, 1), (((1, 512), 16), 0, 128, 0))
    swizzle = pycute.Swizzle(2, 4, 3)                # on byte addresses, as the DSL's swizzled pointer
    for kb in range(4):
        held = judge.tile_addresses(case, answer, kb)
        for mn in range(0, 128, 7):
            for k in range(8):
                offset = layout(((mn, k), 0, kb, 0))
                assert held[mn][k] == swizzle(case["smem_base"] + offset * 4)


def test_heuristic_atom_follows_the_dsl_helper():
    assert judge.heuristic_atom(SM100_F16_K[0]) == "K_SW128"
    assert judge.heuristic_atom({**SM100_TF32_MN_SW64[0], "atom": None}) == "MN_SW128_32B"
    assert judge.heuristic_atom({**SM90_F16_MN[0]}) == "MN_SW128"


# --- the recorded campaign replayed -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def campaign():
    with gzip.open(RECORDING, "rt") as handle:
        document = json.load(handle)
    findings = {arch: [judge.compare(r["case"], r["answer"]) for r in rs] for arch, rs in document["records"].items()}
    return document, findings


def test_campaign_has_2000_configurations_per_arch(campaign):
    document, _ = campaign
    assert {arch: len(rs) >= 2000 for arch, rs in document["records"].items()} == {"sm90": True, "sm100": True}
    assert document["provenance"]["details"]["version"] == "nvidia-cutlass-dsl 4.8.1"


def test_campaign_figures_replay(campaign):
    document, findings = campaign
    for arch, records in document["records"].items():
        figures = document["figures"][arch]
        kinds = [f.kind for f in findings[arch]]
        assert figures["elements_compared"] == sum(f.elements for f in findings[arch])
        assert figures["disagreements"] == sum(k != "agree" for k in kinds)
        assert figures["by_kind"] == {k: kinds.count(k) for k in set(kinds)}


def test_no_dsl_descriptor_misreads_the_dsls_layout(campaign):
    _, findings = campaign
    assert not [f for fs in findings.values() for f in fs if f.kind == "descriptor-misreads-layout"]


def test_kept_disagreements_are_the_campaigns(campaign):
    document, findings = campaign
    with open(KEPT) as handle:
        kept = json.load(handle)
    classes = {}
    for arch, records in document["records"].items():
        for index, (record, finding) in enumerate(zip(records, findings[arch])):
            key = judge.finding_class(record, finding)
            if key is not None:
                classes.setdefault(key, []).append(index)
    assert {(c["arch"], c["kind"], c["what"]): c["indices"] for c in kept["classes"]} == classes
    for c in kept["classes"]:
        assert c["right"] != "undecided" and c["note"]
        assert c["reproducer"]["call"].startswith("CUTE_DSL_ARCH=")
