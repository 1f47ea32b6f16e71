fn main() {
    println!("{:?}", ispc_skinning::Isa::available());
}
