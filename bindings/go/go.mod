module idem.example/idem

go 1.19
