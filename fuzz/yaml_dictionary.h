// Tokens the mutation driver inserts into YAML inputs: structure, the descriptor formats' keys,
// and numbers at the edges of the ranges the loaders check.
#pragma once

#include <string>
#include <vector>

namespace fabric::fuzz {

inline std::vector<std::string> yaml_tokens(std::vector<std::string> keys) {
    std::vector<std::string> tokens = {"\n",
                                       "\n  ",
                                       "\n- ",
                                       ": ",
                                       ", ",
                                       "[",
                                       "]",
                                       "{",
                                       "}",
                                       "- ",
                                       "? ",
                                       "---\n",
                                       "\n...\n",
                                       "&a ",
                                       "*a",
                                       "!!binary ",
                                       "!tag ",
                                       "\"\\x1b[2J\"",
                                       "'quoted'",
                                       "|\n  block\n",
                                       "<<: ",
                                       "~",
                                       "null",
                                       "true",
                                       "false",
                                       "#",
                                       "0",
                                       "1",
                                       "-1",
                                       "0x",
                                       "0x1f",
                                       "255",
                                       "256",
                                       "65535",
                                       "65536",
                                       "2147483647",
                                       "2147483648",
                                       "4294967295",
                                       "4294967296",
                                       "18446744073709551615",
                                       "18446744073709551616",
                                       "1e9",
                                       "0-0",
                                       "99-99",
                                       "9-0",
                                       "1-1"};
    for (auto& k : keys) tokens.push_back(std::move(k));
    return tokens;
}

}  // namespace fabric::fuzz
