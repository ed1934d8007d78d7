fn main() -> std::process::ExitCode {
    llmgw::run(std::env::args_os())
}
