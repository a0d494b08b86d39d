// `trainwatch hash-password`: the Argon2id hash of a password read from standard input,
// for a user in the config file (auth.users[].password_hash). The password is read, not
// taken as an argument, so it stays out of shell history and the process list.
#include <iostream>
#include <string>

#include "auth/password_hash.h"
#include "cli/commands.h"

namespace trainwatch::cli {

Command add_hash_password_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "hash-password", "Print the Argon2id hash of the password on standard input (for auth.users)");
  return Command{sub, [] {
                   std::string password;
                   std::getline(std::cin, password);
                   if (password.size() < 12) {
                     std::cerr << "found a password of " << password.size()
                               << " characters; expected at least 12\n";
                     return 1;
                   }
                   const std::string hash = auth::hash_password(password);
                   if (hash.empty()) {
                     std::cerr << "cannot hash the password (out of memory)\n";
                     return 1;
                   }
                   std::cout << hash << "\n";
                   return 0;
                 }};
}

}  // namespace trainwatch::cli
