// fabricctl mesh show: the fabric as a picture, one self-contained HTML page
// (fabric/fabric_page.h).
#pragma once

#include "cli_common.h"

namespace fabricctl {

CliCommandPtr add_mesh_show_command(CLI::App& app, bool& as_json);

}  // namespace fabricctl
