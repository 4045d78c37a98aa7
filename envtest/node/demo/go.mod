module customapp.example/cluster-demo

go 1.24
