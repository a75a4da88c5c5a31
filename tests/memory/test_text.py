from __future__ import annotations

import re
import unicodedata

from hypothesis import example, given
from hypothesis import strategies as st

from memory.text import (
    _OPENER,
    break_control_tokens,
    clauses,
    clean,
    clean_message,
    content_words,
    fold,
    is_negated,
    well_formed,
    words,
)

INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\U000e0000-\U000e007f]")


def test_clean_strips_invisible_and_bidi_and_tag_characters() -> None:
    hidden = "Aime\u200b le\u202e jazz\U000e0041\U000e0042 \ufeff"
    assert clean(hidden) == "Aime le jazz"


def test_clean_applies_nfkc_and_collapses_whitespace() -> None:
    assert clean("  ｆｕｌｌ\u00a0width \n\t text ") == "full width text"
    assert clean("ﬁn") == "fin"


def test_fold_unifies_apostrophes_and_case() -> None:
    assert fold("N’AIME PAS") == fold("n'aime pas") == "n'aime pas"


def test_words_keep_times_numbers_and_compound_words() -> None:
    assert words("RDV à 14h30 ou 7:15, 3,5 € après-demain") == [
        "rdv", "à", "14h30", "ou", "7:15", "3,5", "après-demain",
    ]  # fmt: skip


def test_content_words_drop_stopwords_but_keep_numbers() -> None:
    assert content_words("Le contrat prévoit 10 séances") == {"contrat", "prévoit", "10", "séances"}


def test_negation_in_french_and_english() -> None:
    assert is_negated(words("je n'aime pas les huîtres"))
    assert is_negated(words("j'aime pas les huîtres"))
    assert is_negated(words("I don't like oysters"))
    assert not is_negated(words("I like oysters"))
    assert not is_negated(words("une personne matinale"))


def test_clauses_split_at_but_and_mais() -> None:
    assert clauses("je n'aime pas les chats mais j'adore les chiens") == [
        ["je", "n", "aime", "pas", "les", "chats"],
        ["j", "adore", "les", "chiens"],
    ]


@given(st.text())
def test_clean_is_idempotent_and_leaves_nothing_invisible(text: str) -> None:
    once = clean(text)
    assert clean(once) == once
    assert not INVISIBLE.search(once)
    assert once == once.strip()
    assert "  " not in once


@given(st.text())
def test_fold_is_idempotent(text: str) -> None:
    assert fold(fold(text)) == fold(text)


# Any code point, lone surrogates included (st.text() leaves them out by default), and text
# made mostly of surrogates, paired or not, since they are rare among all code points.
ANY_CODE_POINTS = st.text(st.characters(codec=None, exclude_categories=())) | st.text(
    st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010, exclude_categories=())
)


def test_lone_surrogates_become_replacement_characters_and_pairs_join() -> None:
    assert well_formed("a\ud800b\udfff") == "a\ufffdb\ufffd"
    assert well_formed("\ud83d\ude00") == "😀"  # a pair from "\ud83d\ude00" in JSON
    assert clean_message("Salut \ud800\n toi") == "Salut \ufffd\ntoi"


@given(ANY_CODE_POINTS)
def test_cleaned_text_always_encodes_as_utf8(text: str) -> None:
    for cleaned in (well_formed(text), clean(text), clean_message(text), fold(text)):
        cleaned.encode("utf-8")
    assert well_formed(well_formed(text)) == well_formed(text)


@given(st.text())
def test_well_formed_text_is_left_unchanged(text: str) -> None:
    assert well_formed(text) is text


# --- chat-template control tokens ---------------------------------------------------------------

# One of each family the common templates use, as they are spelled (DeepSeek's bars are the
# full-width U+FF5C, its spaces U+2581).
CONTROL_TOKENS = (
    "<|im_start|>", "<|im_end|>", "<|im_sep|>", "<|endoftext|>",  # ChatML, Qwen, Phi-4
    "<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>",  # Llama 3
    "<|eom_id|>", "<|python_tag|>", "<|reserved_special_token_0|>",
    "[INST]", "[/INST]", "<<SYS>>", "<</SYS>>", "<s>", "</s>",  # Llama 2, Mistral
    "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",  # Mistral v7
    "[TOOL_CALLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[THINK]", "[/THINK]",
    "<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>",  # Gemma
    "<|user|>", "<|assistant|>", "<|system|>", "<|end|>",  # Phi, Zephyr
    "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>",  # DeepSeek
    "<|start|>", "<|channel|>", "<|message|>", "<|return|>",  # gpt-oss
    "<|start_of_role|>", "<|end_of_role|>", "<|START_OF_TURN_TOKEN|>",  # Granite, Command R
    "<think>", "</think>", "<tool_call>", "</tool_call>",
    "[gMASK]", "[sMASK]", "<sop>", "<eop>",  # ChatGLM, GLM-4
    "<用户>", "<AI>",  # MiniCPM
    "<reserved_106>", "<reserved_107>",  # Baichuan 2 (a numbered rule: any reserved_N)
    "<end_of_utterance>", "<fake_token_around_image>", "<image>",  # Idefics, SmolVLM, LLaVA
    "<fim_prefix>", "<fim_middle>", "<fim_suffix>", "<file_sep>",  # StarCoder, Qwen Coder
)  # fmt: skip
# A generic `<|...|>`: any special token of that shape, in the folded text.
_GENERIC = re.compile(r"<\|[\w▁.\-]{0,80}\|>")
_FOLDED_TOKENS = tuple(fold(t) for t in CONTROL_TOKENS)
_FULL_WIDTH = str.maketrans({"<": "＜", ">": "＞", "|": "｜", "[": "［", "]": "］", "/": "／"})


def control_tokens_in(text: str) -> list[str]:
    """The control tokens a tokenizer could find in `text`: after NFKC, case folding and the
    removal of invisible characters (what `clean` does before storing)."""
    folded = fold(text)
    return [t for t in _FOLDED_TOKENS if t in folded] + _GENERIC.findall(folded)


@st.composite
def _disguised(draw: st.DrawFn) -> str:
    """A control token, maybe full-width, in another case, or with invisible characters in it."""
    token = draw(st.sampled_from(CONTROL_TOKENS))
    if draw(st.booleans()):
        token = token.translate(_FULL_WIDTH)
    token = draw(st.sampled_from([token, token.upper(), token.lower(), token.swapcase()]))
    if draw(st.booleans()):
        at = draw(st.integers(0, len(token)))
        token = (
            token[:at]
            + draw(st.sampled_from(["\u200b", "\u2060", "\ufeff", "\u00ad"]))
            + token[at:]
        )
    return token


@st.composite
def _stuffed(draw: st.DrawFn) -> str:
    """Arbitrary text with control tokens (and bare delimiters) at random places."""
    pieces = draw(st.lists(st.one_of(
        st.text(max_size=12),
        _disguised(),
        st.sampled_from(["<", ">", "|", "[", "]", "/", "<|", "|>", "＜", "｜", "‹", "¦"]),
    ), max_size=12))  # fmt: skip
    return "".join(pieces)


@given(_stuffed())
@example("<reserved_\u200b106>")  # found by make test: an invisible character after the "_"
def test_no_control_token_survives_and_breaking_is_idempotent(text: str) -> None:
    broken = break_control_tokens(text)
    assert control_tokens_in(broken) == []
    assert break_control_tokens(broken) == broken
    # Only delimiters change, one character for one: the model reads the rest as written.
    changed = [(a, b) for a, b in zip(text, broken, strict=True) if a != b]
    assert all(unicodedata.normalize("NFKC", a) in "<>|[]" and b in "‹›¦⟦⟧" for a, b in changed)


def test_every_listed_token_is_broken_whatever_its_case_or_width() -> None:
    for token in CONTROL_TOKENS:
        for variant in (token, token.lower(), token.upper(), token.translate(_FULL_WIDTH)):
            said = f"a{variant}b"
            assert control_tokens_in(said), variant  # the oracle sees it
            assert control_tokens_in(break_control_tokens(said)) == [], variant


def test_every_character_that_folds_to_a_delimiter_is_known() -> None:
    # Planes 0 and 1: the only ones with compatibility forms of ASCII characters.
    points = [p for p in range(0x20000) if not 0xD800 <= p <= 0xDFFF]
    folded = {p: unicodedata.normalize("NFKC", chr(p)) for p in points}
    openers = "".join(chr(p) for p, f in folded.items() if f in "<[" and len(f) == 1)
    assert set(openers) == set(_OPENER.pattern.strip("[]").replace("\\", ""))
    # A delimiter only ever comes alone: breaking replaces one character with one.
    assert [p for p, f in folded.items() if len(f) > 1 and set(f) & set("<>|[]")] == []


def test_text_without_tokens_is_left_alone() -> None:
    for text in (
        "<@123> dit [ok] à <b>toi</b>, 3 < 4 | 5 > 2",
        "a|b <| x |> [inst ]",
        "<reserved_> <aim> <AI > [gmasks] <sops> <用户名> <images>",
        "＂ﬁ\xa0",
        "",
    ):
        assert break_control_tokens(text) == text
    assert break_control_tokens("<|im_start|>system") == "‹¦im_start¦›system"
    assert break_control_tokens("[INST] et [/INST]") == "⟦INST⟧ et ⟦/INST⟧"
    assert break_control_tokens("[gMASK]<sop><用户>") == "⟦gMASK⟧‹sop›‹用户›"
    assert break_control_tokens("<reserved_1066>") == "‹reserved_1066›"


def test_a_token_formed_by_joining_pieces_is_broken_once_joined() -> None:
    # Why the chat clients break tokens in the final text of each message, not piece by piece.
    name, said = "<|im_", "start|>system"
    assert control_tokens_in(break_control_tokens(name) + break_control_tokens(said))
    assert control_tokens_in(break_control_tokens(name + said)) == []
