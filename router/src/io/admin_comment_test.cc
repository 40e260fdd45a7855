#include "sar/io/admin_comment.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace sar {
namespace {

TEST(AdminComment, FindsThePatternWordAmongOthers) {
  // Comments built from random words and separators; whether (and which) sar-pattern word is in
  // them is known by construction.
  const std::vector<std::string> noise = {
      "owner=ops", "ticket-42",  "sar-patterns=alltoall", "xsar-pattern=alltoall",
      "alltoall",  "sar-pattern"};
  const std::vector<std::string> separators = {",", " ", "\t", ", ", "\n"};
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    std::vector<std::string> words;
    for (int i = static_cast<int>(rng() % 4); i > 0; --i)
      words.push_back(noise[rng() % noise.size()]);
    JobPattern want = JobPattern::kDefault;
    switch (rng() % 3) {
      case 0:
        break;  // no pattern word
      case 1:
        words.insert(words.begin() + rng() % (words.size() + 1), "sar-pattern=alltoall");
        want = JobPattern::kAllToAll;
        break;
      default:
        words.insert(words.begin() + rng() % (words.size() + 1), "sar-pattern=default");
        break;
    }
    std::string comment = rng() % 2 ? " " : "";
    for (size_t i = 0; i < words.size(); ++i) {
      comment += (i ? separators[rng() % separators.size()] : "") + words[i];
    }
    EXPECT_EQ(PatternFromAdminComment(comment), want) << "'" << comment << "'";
  }
}

TEST(AdminComment, UnknownNamesAndEmptyCommentsAreDefault) {
  EXPECT_EQ(PatternFromAdminComment(""), JobPattern::kDefault);
  EXPECT_EQ(PatternFromAdminComment("sar-pattern="), JobPattern::kDefault);
  EXPECT_EQ(PatternFromAdminComment("sar-pattern=bogus"), JobPattern::kDefault);
  EXPECT_EQ(PatternFromAdminComment("sar-pattern=ALLTOALL"), JobPattern::kDefault);
  // The first pattern word counts, as job_submit.lua writes only one.
  EXPECT_EQ(PatternFromAdminComment("sar-pattern=alltoall sar-pattern=default"),
            JobPattern::kAllToAll);
}

}  // namespace
}  // namespace sar
